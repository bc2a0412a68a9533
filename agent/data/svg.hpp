#pragma once
// Small inline SVG charts for self-contained HTML (no scripts, no external files).
// Labels are escaped here; callers pass plain text. Each chart's <svg> carries
// a class naming its kind (chart bar, chart stack, chart line, chart histogram)
// and the `data-chart` attribute given, so tests can find it.
#include <string>
#include <vector>

namespace ptxbench::data {

struct bar {
  std::string label;
  double value = 0.0;
};

// Vertical bars with their value written above each; y from 0 to the largest value.
std::string svg_bar_chart(const std::string& title, const std::vector<bar>& bars);

// Stacked bars: one bar per label, parts stacked bottom up in the given order,
// each part with its own colour and a legend entry.
struct stack_part {
  std::string name;
  std::string color;
  std::vector<double> values;  // one per label
};
std::string svg_stacked_bars(const std::string& title, const std::vector<std::string>& labels,
                             const std::vector<stack_part>& parts);

struct series {
  std::string name;
  std::vector<double> values;  // one per x position; NaN: no point there
};

// Lines over x = 0..n-1 (labelled with x_labels), y from 0 to y_max. Every
// series has its own colour, dash pattern and hollow marker shape, markers
// shrinking with the series index, so identical series stay visible. The
// legend lists one series per row under the plot.
std::string svg_line_chart(const std::string& title, const std::vector<std::string>& x_labels,
                           const std::vector<series>& lines, double y_max, const std::string& chart_id = "");

// A vertical reference line drawn over a histogram at `value`.
struct reference_line {
  double value = 0.0;
  std::string label;
};
// Counts of `values` in `bins` equal-width bins over a range that holds the
// values and every reference line; bin edges are labelled below the axis,
// thinned so that no two labels overlap.
std::string svg_histogram(const std::string& title, const std::vector<double>& values, int bins,
                          const std::vector<reference_line>& lines = {});

}  // namespace ptxbench::data
