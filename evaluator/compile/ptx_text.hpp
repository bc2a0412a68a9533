#pragma once
// Lexical helpers shared by the PTX entry parser and the instruction scan,
// and the PTX lines that load local memory (for the profile's summary).
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::ptx_text {

// Returns `ptx` with every // and /* */ comment and the inside of every string
// literal replaced by spaces. Newlines are kept, so byte offsets and line
// numbers of the result are those of the input. An unterminated block comment
// or string blanks the rest of the text (ptxas would reject it anyway).
std::string blank_comments_and_strings(std::string_view ptx);

// One lexical token of blanked PTX: a word (identifiers, opcodes with their
// dotted and `::` qualifiers, numbers, directives such as .param) or a single
// punctuation character.
struct token {
  std::string text;
  int line = 0;  // 1-based
  bool is_word = false;
};

// Splits blanked PTX into tokens. Words are maximal runs of letters, digits,
// '_', '.', '$', '%' and "::" pairs, so "shared::cluster" is one word and the
// label "L1:" is the word "L1" followed by ':'.
std::vector<token> tokenize(std::string_view blanked);

// The 1-based lines of `text` (without their newline characters).
std::vector<std::string_view> split_lines(std::string_view text);

// The PTX lines (1-based) that load from local memory: ld.local, and generic
// loads through an address that cvta.local made (moved, added to or
// subtracted from on the way). ptxas compiles the latter to a generic LD,
// which the SASS alone cannot tell from a global load.
std::set<int> local_load_lines(std::string_view ptx);

// Who waits on whom through mbarriers, by the PTX's loops: the profile charges
// a consumer's wait for TMA data to the code that issues the loads
// (profile_summary.cpp, "blame through the barrier").
//
// A wait is an mbarrier.try_wait/test_wait with the branch that repeats it
// (the spin loop: a label and a backward branch at most 16 statements apart,
// with no TMA load or expect_tx between),
// or the wait's line alone. A producer loop is the innermost loop (not a spin
// loop) around a TMA load that completes on an mbarrier (cp.async.bulk ...
// mbarrier::complete_tx); its barriers are those operands and those of its
// mbarrier.expect_tx / arrive.expect_tx. A wait inside a producer loop on one
// of that loop's barriers (the same register) waits for the producer's own
// loads; one on another barrier (the slots the consumers free) waits for
// the consumers.
struct barrier_wait {
  int first = 0, last = 0;  // 1-based lines of the spin loop, or the wait's line twice
  std::string barrier;      // the address register of the wait ("%r85")
  bool in_producer = false;
  bool own_loads = false;   // in a producer loop, on a barrier that loop's own TMA loads complete
};
struct barrier_roles {
  std::vector<barrier_wait> waits;
  std::vector<std::pair<int, int>> producer_loops;  // 1-based line ranges, first to last
  bool in_producer(int line) const;
};
barrier_roles barrier_roles_of(std::string_view ptx);

}  // namespace ptxbench::ptx_text
