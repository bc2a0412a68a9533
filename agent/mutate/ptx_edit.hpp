#pragma once
// Line-level helpers the operators share: PTX and manifest edits that either
// apply or report that their pattern is absent.
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace ptxbench::mutate {

std::vector<std::string> split_lines(const std::string& text);
std::string join_lines(const std::vector<std::string>& lines);
// A line holding an instruction (not blank, not a comment, not a directive or label).
bool is_instruction(const std::string& line);
// Indices of instruction lines that match `pattern` (regex_search).
std::vector<size_t> matching_lines(const std::vector<std::string>& lines, const std::regex& pattern);
// A uniformly chosen index below n (n > 0).
size_t pick(std::mt19937_64& rng, size_t n);
// The highest N of any `.reg <type> <prefix><N>;` declaration, e.g. 607 for
// "%r" in `.reg .b32 %r<607>;`; nullopt when there is none.
std::optional<int> declared_registers(const std::string& ptx, const std::string& prefix);
// The leading whitespace of a line, to keep edited lines aligned.
std::string indent_of(const std::string& line);
// The registers (%name) in a piece of PTX, in order, e.g. "{%f1, %f2}" -> %f1, %f2.
std::vector<std::string> registers_in(const std::string& list);
// The manifest as JSON, or nullopt when it does not parse or has no launches.
std::optional<nlohmann::json> parse_manifest_json(const std::string& text);
std::string dump_manifest(const nlohmann::json& manifest);

}  // namespace ptxbench::mutate
