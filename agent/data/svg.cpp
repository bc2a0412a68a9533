#include "agent/data/svg.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "agent/data/html.hpp"

namespace ptxbench::data {
namespace {

constexpr int width = 520;
constexpr int height = 260;
constexpr int left = 48;
constexpr int right = 16;
constexpr int top = 30;
constexpr int bottom = 46;
constexpr int plot_w = width - left - right;
constexpr int plot_h = height - top - bottom;
const char* palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#9c755f"};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string open_svg(const std::string& title) {
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" << width << "\" height=\"" << height
     << "\" viewBox=\"0 0 " << width << ' ' << height << "\" role=\"img\" aria-label=\"" << html_escape(title)
     << "\">\n<title>" << html_escape(title) << "</title>\n"
     << "<text x=\"" << width / 2 << "\" y=\"18\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">"
     << html_escape(title) << "</text>\n"
     << "<line x1=\"" << left << "\" y1=\"" << top + plot_h << "\" x2=\"" << left + plot_w << "\" y2=\""
     << top + plot_h << "\" stroke=\"#333\"/>\n"
     << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + plot_h
     << "\" stroke=\"#333\"/>\n";
  return os.str();
}

std::string y_axis(double y_max) {
  std::ostringstream os;
  for (int i = 0; i <= 4; ++i) {
    double v = y_max * i / 4.0;
    double y = top + plot_h - plot_h * i / 4.0;
    os << "<text x=\"" << left - 4 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\" font-size=\"10\">" << number(v)
       << "</text>\n<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + plot_w << "\" y2=\"" << y
       << "\" stroke=\"#ddd\"/>\n";
  }
  return os.str();
}

std::string bars_body(const std::vector<bar>& bars, const char* color) {
  std::ostringstream os;
  double y_max = 0.0;
  for (const auto& b : bars) y_max = std::max(y_max, b.value);
  if (y_max <= 0.0) y_max = 1.0;
  os << y_axis(y_max);
  double slot = bars.empty() ? plot_w : static_cast<double>(plot_w) / bars.size();
  for (size_t i = 0; i < bars.size(); ++i) {
    double h = plot_h * bars[i].value / y_max;
    double x = left + slot * i + slot * 0.15;
    double y = top + plot_h - h;
    os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << slot * 0.7 << "\" height=\"" << h
       << "\" fill=\"" << color << "\"><title>" << html_escape(bars[i].label) << ": " << number(bars[i].value)
       << "</title></rect>\n"
       << "<text x=\"" << x + slot * 0.35 << "\" y=\"" << y - 3 << "\" text-anchor=\"middle\" font-size=\"10\">"
       << number(bars[i].value) << "</text>\n"
       << "<text x=\"" << x + slot * 0.35 << "\" y=\"" << top + plot_h + 14
       << "\" text-anchor=\"middle\" font-size=\"10\">" << html_escape(bars[i].label) << "</text>\n";
  }
  return os.str();
}

}  // namespace

std::string svg_bar_chart(const std::string& title, const std::vector<bar>& bars) {
  return open_svg(title) + bars_body(bars, palette[0]) + "</svg>\n";
}

std::string svg_line_chart(const std::string& title, const std::vector<std::string>& x_labels,
                           const std::vector<series>& lines, double y_max) {
  std::ostringstream os;
  os << open_svg(title);
  if (y_max <= 0.0) y_max = 1.0;
  os << y_axis(y_max);
  size_t n = x_labels.size();
  auto x_of = [&](size_t i) { return n <= 1 ? left + plot_w / 2.0 : left + plot_w * static_cast<double>(i) / (n - 1); };
  auto y_of = [&](double v) { return top + plot_h - plot_h * std::clamp(v / y_max, 0.0, 1.0); };
  for (size_t i = 0; i < n; ++i) {
    os << "<text x=\"" << x_of(i) << "\" y=\"" << top + plot_h + 14 << "\" text-anchor=\"middle\" font-size=\"10\">"
       << html_escape(x_labels[i]) << "</text>\n";
  }
  for (size_t s = 0; s < lines.size(); ++s) {
    const char* color = palette[s % std::size(palette)];
    os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (size_t i = 0; i < lines[s].values.size() && i < n; ++i) {
      os << x_of(i) << ',' << y_of(lines[s].values[i]) << ' ';
    }
    os << "\"/>\n";
    for (size_t i = 0; i < lines[s].values.size() && i < n; ++i) {
      os << "<circle cx=\"" << x_of(i) << "\" cy=\"" << y_of(lines[s].values[i]) << "\" r=\"3\" fill=\"" << color
         << "\"><title>" << html_escape(lines[s].name) << ", " << html_escape(x_labels[i]) << ": "
         << number(lines[s].values[i]) << "</title></circle>\n";
    }
    double lx = left + 4 + static_cast<double>(plot_w) / lines.size() * s;
    os << "<rect x=\"" << lx << "\" y=\"" << height - 14 << "\" width=\"10\" height=\"10\" fill=\"" << color
       << "\"/><text x=\"" << lx + 14 << "\" y=\"" << height - 5 << "\" font-size=\"10\">"
       << html_escape(lines[s].name) << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

std::string svg_histogram(const std::string& title, const std::vector<double>& values, int bins) {
  std::vector<bar> bars;
  if (!values.empty() && bins > 0) {
    auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
    double lo = *lo_it, hi = *hi_it;
    if (hi <= lo) bins = 1;
    double w = bins == 1 ? 0.0 : (hi - lo) / bins;
    bars.resize(bins);
    for (int b = 0; b < bins; ++b) {
      bars[b].label = bins == 1 ? number(lo) : number(lo + w * b) + "-" + number(lo + w * (b + 1));
    }
    for (double v : values) {
      int b = bins == 1 ? 0 : std::min(bins - 1, static_cast<int>((v - lo) / w));
      bars[b].value += 1;
    }
  }
  std::string empty = values.empty() ? "<text x=\"" + std::to_string(left + plot_w / 2) + "\" y=\"" +
                                          std::to_string(top + plot_h / 2) +
                                          "\" text-anchor=\"middle\" font-size=\"12\">no values</text>\n"
                                    : "";
  return open_svg(title) + bars_body(bars, palette[2]) + empty + "</svg>\n";
}

}  // namespace ptxbench::data
