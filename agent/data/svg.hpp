#pragma once
// Small inline SVG charts for self-contained HTML (no scripts, no external files).
// Labels are escaped here; callers pass plain text.
#include <string>
#include <vector>

namespace ptxbench::data {

struct bar {
  std::string label;
  double value = 0.0;
};

// Vertical bars with their value written above each; y from 0 to the largest value.
std::string svg_bar_chart(const std::string& title, const std::vector<bar>& bars);

struct series {
  std::string name;
  std::vector<double> values;  // one per x position
};

// Lines over x = 0..n-1 (labelled with x_labels), y from 0 to y_max, with a legend.
std::string svg_line_chart(const std::string& title, const std::vector<std::string>& x_labels,
                           const std::vector<series>& lines, double y_max);

// Counts of `values` in `bins` equal-width bins between min and max (one bin when all equal).
std::string svg_histogram(const std::string& title, const std::vector<double>& values, int bins);

}  // namespace ptxbench::data
