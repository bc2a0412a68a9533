#include "evaluator/gpu/where_summary.hpp"

#include <cstdio>
#include <sstream>
#include <utility>

#include "evaluator/api/hidden_sizes.hpp"

namespace ptxbench::gpu {
namespace {

constexpr int64_t k_tile = 128;

std::vector<std::pair<int64_t, int64_t>> ranges_of(const std::vector<uint32_t>& counts) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < int64_t(counts.size()); ++i) {
    if (!counts[size_t(i)]) continue;
    if (!out.empty() && out.back().second == i - 1) out.back().second = i;
    else out.push_back({i, i});
  }
  return out;
}

std::string ranges_text(const std::vector<std::pair<int64_t, int64_t>>& r) {
  std::string s;
  for (size_t i = 0; i < r.size(); ++i) {
    if (i) s += i + 1 == r.size() ? " and " : ", ";
    s += std::to_string(r[i].first);
    if (r[i].second != r[i].first) s += "-" + std::to_string(r[i].second);
  }
  return s;
}

// "the last row tile", "row tile 3" when one range covers exactly whole tiles.
std::string tile_note(const std::vector<std::pair<int64_t, int64_t>>& r, int64_t extent, const char* what) {
  if (r.size() != 1) return "";
  auto [a, b] = r[0];
  if (a % k_tile != 0 || ((b + 1) % k_tile != 0 && b + 1 != extent)) return "";
  int64_t first = a / k_tile, last = b / k_tile, count = (extent + k_tile - 1) / k_tile;
  std::ostringstream s;
  if (first == last)
    s << " (" << (last == count - 1 ? "the last " : first == 0 ? "the first " : "") << what << " tile"
      << (last == count - 1 || first == 0 ? "" : " " + std::to_string(first)) << ")";
  else
    s << " (" << what << " tiles " << first << "-" << last << " of " << count << ")";
  return s.str();
}

// Every k-th tile along one axis, offset o, and no others.
std::string periodic_note(const std::vector<bool>& bad_tiles, const char* what) {
  int64_t n = int64_t(bad_tiles.size());
  int64_t nbad = 0;
  for (bool b : bad_tiles) nbad += b;
  if (n < 4 || nbad == 0 || nbad == n) return "";
  for (int64_t k = 2; k <= 8 && k < n; ++k)
    for (int64_t o = 0; o < k; ++o) {
      bool match = true;
      for (int64_t i = 0; i < n && match; ++i) match = bad_tiles[size_t(i)] == (i % k == o);
      if (match) {
        std::ostringstream s;
        s << "every " << k << (k == 2 ? "nd " : k == 3 ? "rd " : "th ") << what << " tile (" << what << " tiles " << o
          << ", " << o + k << ", " << o + 2 * k << ", ...)";
        return s.str();
      }
    }
  return "";
}

std::string pct(double f) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g%%", 100 * f);
  return b;
}

// "the last 3% of rows", "the first 50% of columns", "rows from 20% to 30% of
// the way", with "(within the last row tile)" when the range lies inside it.
std::string relative_range(const std::pair<int64_t, int64_t>& r, int64_t extent, const char* what) {
  auto [a, b] = r;
  const double n = double(extent);
  std::string s;
  if (b == extent - 1) s = "the last " + pct(double(b - a + 1) / n) + " of " + what + "s";
  else if (a == 0) s = "the first " + pct(double(b + 1) / n) + " of " + what + "s";
  else s = std::string(what) + "s from " + pct(double(a) / n) + " to " + pct(double(b + 1) / n) + " of the way";
  const int64_t last_tile_start = (extent - 1) / k_tile * k_tile;
  if (extent > k_tile && a >= last_tile_start) s += std::string(" (within the last ") + what + " tile)";
  else if (extent > k_tile && b < k_tile) s += std::string(" (within the first ") + what + " tile)";
  return s;
}

std::string tile_position(int64_t index, int64_t extent, const char* what) {
  const int64_t tiles = (extent + k_tile - 1) / k_tile, t = index / k_tile;
  if (tiles == 1) return std::string("the only ") + what + " tile";
  return std::string(t == 0 ? "the first " : t == tiles - 1 ? "the last " : "an inner ") + what + " tile";
}

// The summary at a hidden size: shares of rows, columns and tiles.
std::string summarize_relative(const bad_element_map& m) {
  std::vector<std::string> parts;
  const double n = double(m.rows * m.cols);
  if (m.bad == m.rows * m.cols) parts.push_back("every element is wrong");
  if (m.untouched > 0) parts.push_back(pct(double(m.untouched) / n) + " of the elements never written");
  if (m.nonfinite > 0) parts.push_back(pct(double(m.nonfinite) / n) + " of the elements NaN/Inf");
  if (m.bad < m.rows * m.cols) {
    auto rows = ranges_of(m.row_bad);
    auto cols = ranges_of(m.col_bad);
    bool all_rows = rows.size() == 1 && rows[0].first == 0 && rows[0].second == m.rows - 1;
    bool all_cols = cols.size() == 1 && cols[0].first == 0 && cols[0].second == m.cols - 1;
    if (!all_rows && rows.size() == 1) parts.push_back("bad elements confined to " + relative_range(rows[0], m.rows, "row"));
    if (!all_cols && cols.size() == 1)
      parts.push_back("bad elements confined to " + relative_range(cols[0], m.cols, "column"));
    int64_t bad_tiles = 0;
    for (uint32_t t : m.tile_bad) bad_tiles += t != 0;
    if (bad_tiles < int64_t(m.tile_bad.size()))
      parts.push_back("in " + pct(double(bad_tiles) / double(m.tile_bad.size())) + " of the 128x128 tiles");
  }
  if (m.first_bad >= 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, m.first_untouched ? " never written (expected %.4g)" : " = %.4g (expected %.4g)",
                  m.first_untouched ? m.first_expected : m.first_got, m.first_expected);
    parts.push_back("the first bad element of " + m.tensor + " lies in " + tile_position(m.first_bad / m.cols, m.rows, "row") +
                    " and " + tile_position(m.first_bad % m.cols, m.cols, "column") + buf);
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

std::string correctness_headline(const correctness_report& r) {
  for (const auto& c : r.outputs) {
    if (c.passed) continue;
    const std::string seed = c.timed_run ? "in a timed run" : c.hidden_seed ? "hidden seed" : "seed " + std::to_string(c.seed);
    char buf[512];
    // At a hidden size the element counts would tell its extent: shares only.
    if (c.hidden_size)
      std::snprintf(buf, sizeof buf, "%s wrong %s (%s): %s of %s bad, max abs error %.3g, rel L2 %.3g", c.tensor.c_str(),
                    at_size(c.size).c_str(), seed.c_str(), pct(c.mismatch_fraction).c_str(), c.tensor.c_str(),
                    c.max_abs_error, c.rel_l2_error);
    else
      std::snprintf(buf, sizeof buf, "%s wrong at %s (%s): %lld of %lld elements bad (%s), max abs error %.3g, rel L2 %.3g",
                    c.tensor.c_str(), c.size.c_str(), seed.c_str(),
                    (long long)(c.mismatch_fraction * double(c.elements) + 0.5), (long long)c.elements,
                    pct(c.mismatch_fraction).c_str(), c.max_abs_error, c.rel_l2_error);
    std::string h = buf;
    if (!c.where.empty()) h += "; " + c.where;
    if (!r.note.empty()) h += "; " + r.note;
    return h;
  }
  return r.note;
}

std::string summarize_bad_elements(const bad_element_map& m) {
  if (m.bad == 0) return "";
  if (m.relative) return summarize_relative(m);
  std::vector<std::string> parts;
  int64_t n = m.rows * m.cols;
  if (m.bad == n) parts.push_back("every element is wrong");
  if (m.untouched > 0)
    parts.push_back(std::to_string(m.untouched) + " of " + std::to_string(n) + " elements never written");
  if (m.nonfinite > 0) parts.push_back(std::to_string(m.nonfinite) + " NaN/Inf");

  if (m.bad < n) {
    auto rows = ranges_of(m.row_bad);
    auto cols = ranges_of(m.col_bad);
    bool all_rows = rows.size() == 1 && rows[0].first == 0 && rows[0].second == m.rows - 1;
    bool all_cols = cols.size() == 1 && cols[0].first == 0 && cols[0].second == m.cols - 1;
    if (!all_rows && rows.size() <= 3)
      parts.push_back("bad elements confined to rows " + ranges_text(rows) + tile_note(rows, m.rows, "row"));
    if (!all_cols && cols.size() <= 3)
      parts.push_back("bad elements confined to columns " + ranges_text(cols) + tile_note(cols, m.cols, "column"));

    int64_t tile_rows = (m.rows + k_tile - 1) / k_tile, tile_cols = (m.cols + k_tile - 1) / k_tile;
    int64_t bad_tiles = 0;
    std::vector<bool> row_tiles(size_t(tile_rows), false), col_tiles(size_t(tile_cols), false);
    for (int64_t tr = 0; tr < tile_rows; ++tr)
      for (int64_t tc = 0; tc < tile_cols; ++tc)
        if (m.tile_bad[size_t(tr * tile_cols + tc)]) {
          ++bad_tiles;
          row_tiles[size_t(tr)] = col_tiles[size_t(tc)] = true;
        }
    if (bad_tiles < tile_rows * tile_cols)
      parts.push_back("in " + std::to_string(bad_tiles) + " of " + std::to_string(tile_rows * tile_cols) +
                      " 128x128 tiles");
    for (auto note : {periodic_note(row_tiles, "row"), periodic_note(col_tiles, "column")})
      if (!note.empty()) parts.push_back(note);
  }
  if (m.first_bad >= 0) {
    char buf[160];
    int64_t r = m.first_bad / m.cols, c = m.first_bad % m.cols;
    if (m.first_untouched)
      std::snprintf(buf, sizeof buf, "first bad %s[%lld,%lld]: never written (expected %.4g)", m.tensor.c_str(),
                    (long long)r, (long long)c, m.first_expected);
    else
      std::snprintf(buf, sizeof buf, "first bad %s[%lld,%lld] = %.4g (expected %.4g)", m.tensor.c_str(),
                    (long long)r, (long long)c, m.first_got, m.first_expected);
    parts.push_back(buf);
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace ptxbench::gpu
