#include "agent/data/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "agent/data/html.hpp"

namespace ptxbench::data {
namespace {

constexpr int width = 520;
constexpr int height = 260;
constexpr int left = 48;
constexpr int right = 28;
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

std::string open_svg(const std::string& title, const std::string& kind = "bar", int h = height,
                     const std::string& chart_id = "") {
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart " << kind << "\"";
  if (!chart_id.empty()) os << " data-chart=\"" << html_escape(chart_id) << "\"";
  os << " width=\"" << width << "\" height=\"" << h << "\" viewBox=\"0 0 " << width << ' ' << h
     << "\" role=\"img\" aria-label=\"" << html_escape(title)
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
    os << "<text class=\"tick\" x=\"" << left - 4 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\" font-size=\"10\">" << number(v)
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

std::string svg_stacked_bars(const std::string& title, const std::vector<std::string>& labels,
                             const std::vector<stack_part>& parts) {
  std::ostringstream os;
  os << open_svg(title, "stack");
  double y_max = 0.0;
  for (size_t i = 0; i < labels.size(); ++i) {
    double total = 0.0;
    for (const auto& p : parts) total += i < p.values.size() ? p.values[i] : 0.0;
    y_max = std::max(y_max, total);
  }
  if (y_max <= 0.0) y_max = 1.0;
  os << y_axis(y_max);
  double slot = labels.empty() ? plot_w : static_cast<double>(plot_w) / labels.size();
  for (size_t i = 0; i < labels.size(); ++i) {
    double x = left + slot * i + slot * 0.15;
    double base = top + plot_h;
    for (const auto& p : parts) {
      double v = i < p.values.size() ? p.values[i] : 0.0;
      if (v <= 0.0) continue;
      double h = plot_h * v / y_max;
      base -= h;
      os << "<rect x=\"" << x << "\" y=\"" << base << "\" width=\"" << slot * 0.7 << "\" height=\"" << h
         << "\" fill=\"" << p.color << "\"><title>" << html_escape(labels[i]) << ", " << html_escape(p.name) << ": "
         << number(v) << "</title></rect>\n";
    }
    os << "<text x=\"" << x + slot * 0.35 << "\" y=\"" << top + plot_h + 14
       << "\" text-anchor=\"middle\" font-size=\"10\">" << html_escape(labels[i]) << "</text>\n";
  }
  for (size_t k = 0; k < parts.size(); ++k) {
    double lx = left + 4 + 110.0 * k;
    os << "<rect x=\"" << lx << "\" y=\"" << height - 14 << "\" width=\"10\" height=\"10\" fill=\"" << parts[k].color
       << "\"/><text x=\"" << lx + 14 << "\" y=\"" << height - 5 << "\" font-size=\"10\">" << html_escape(parts[k].name)
       << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

namespace {

// A legend entry that fits the chart's width at 10 px (about 80 characters);
// the full name is the entry's tooltip.
std::string legend_label(const std::string& name) {
  if (name.size() <= 80) return name;
  size_t cut = 79;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return name.substr(0, cut) + "\u2026";
}

const char* dashes[] = {"", "6 3", "2 2", "8 3 2 3", "4 4", "1 3", "10 4"};

// A hollow marker of shape `index` centred on (x, y) with half-size r.
std::string marker(size_t index, double x, double y, double r, const char* color) {
  std::ostringstream os;
  os << "fill=\"#fff\" fill-opacity=\"0\" stroke=\"" << color << "\" stroke-width=\"1.5\"";
  std::string paint = os.str();
  os.str("");
  switch (index % 6) {
    case 0: os << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"" << r << "\" " << paint << ">"; break;
    case 1:
      os << "<rect x=\"" << x - r << "\" y=\"" << y - r << "\" width=\"" << 2 * r << "\" height=\"" << 2 * r << "\" "
         << paint << ">";
      break;
    case 2:
      os << "<polygon points=\"" << x << ',' << y - r << ' ' << x - r << ',' << y + r << ' ' << x + r << ',' << y + r
         << "\" " << paint << ">";
      break;
    case 3:
      os << "<polygon points=\"" << x << ',' << y - r << ' ' << x + r << ',' << y << ' ' << x << ',' << y + r << ' '
         << x - r << ',' << y << "\" " << paint << ">";
      break;
    case 4:
      os << "<polygon points=\"" << x << ',' << y + r << ' ' << x - r << ',' << y - r << ' ' << x + r << ',' << y - r
         << "\" " << paint << ">";
      break;
    default:
      os << "<path d=\"M" << x - r << ',' << y - r << "L" << x + r << ',' << y + r << "M" << x - r << ',' << y + r << "L"
         << x + r << ',' << y - r << "\" " << paint << ">";
  }
  return os.str();
}

const char* marker_close(size_t index) {
  static const char* closes[] = {"</circle>", "</rect>", "</polygon>", "</polygon>", "</polygon>", "</path>"};
  return closes[index % 6];
}

}  // namespace

std::string svg_line_chart(const std::string& title, const std::vector<std::string>& x_labels,
                           const std::vector<series>& lines, double y_max, const std::string& chart_id) {
  std::ostringstream os;
  const int legend_rows = static_cast<int>(lines.size());
  const int h = height - 14 + 14 * legend_rows;
  os << open_svg(title, "line", h, chart_id);
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
    const char* dash = dashes[s % std::size(dashes)];
    double r = std::max(2.5, 6.0 - 0.7 * static_cast<double>(s % 5));
    os << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\"";
    if (*dash) os << " stroke-dasharray=\"" << dash << "\"";
    os << " points=\"";
    for (size_t i = 0; i < lines[s].values.size() && i < n; ++i) {
      if (!std::isnan(lines[s].values[i])) os << x_of(i) << ',' << y_of(lines[s].values[i]) << ' ';
    }
    os << "\"/>\n";
    for (size_t i = 0; i < lines[s].values.size() && i < n; ++i) {
      double v = lines[s].values[i];
      if (std::isnan(v)) continue;
      os << marker(s, x_of(i), y_of(v), r, color) << "<title>" << html_escape(lines[s].name) << ", "
         << html_escape(x_labels[i]) << ": " << number(v) << "</title>" << marker_close(s) << "\n";
    }
    double ly = top + plot_h + 30 + 14.0 * s;
    os << "<line x1=\"" << left << "\" y1=\"" << ly - 4 << "\" x2=\"" << left + 24 << "\" y2=\"" << ly - 4
       << "\" stroke=\"" << color << "\" stroke-width=\"1.5\"";
    if (*dash) os << " stroke-dasharray=\"" << dash << "\"";
    os << "/>" << marker(s, left + 12, ly - 4, r, color) << marker_close(s) << "<text x=\"" << left + 30 << "\" y=\""
       << ly << "\" font-size=\"10\"><title>" << html_escape(lines[s].name) << "</title>"
       << html_escape(legend_label(lines[s].name)) << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

std::string svg_histogram(const std::string& title, const std::vector<double>& values, int bins,
                          const std::vector<reference_line>& lines) {
  std::ostringstream os;
  os << open_svg(title, "histogram");
  if (values.empty() || bins < 1) {
    os << y_axis(1.0) << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h / 2
       << "\" text-anchor=\"middle\" font-size=\"12\">no values</text>\n</svg>\n";
    return os.str();
  }
  auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  double lo = *lo_it, hi = *hi_it;
  for (const auto& l : lines) {
    lo = std::min(lo, l.value);
    hi = std::max(hi, l.value);
  }
  if (hi <= lo) hi = lo + 1.0;
  double pad = (hi - lo) * 0.05;
  lo = std::max(0.0, lo - pad);
  hi += pad;
  const double w = (hi - lo) / bins;
  std::vector<double> counts(bins, 0.0);
  for (double v : values) counts[std::clamp(static_cast<int>((v - lo) / w), 0, bins - 1)] += 1;
  // Headroom above the tallest bar keeps its count label clear of the title.
  double y_max = std::ceil(*std::max_element(counts.begin(), counts.end()) * 1.15);
  os << y_axis(y_max);
  auto x_of = [&](double v) { return left + plot_w * (v - lo) / (hi - lo); };
  const double slot = static_cast<double>(plot_w) / bins;
  for (int b = 0; b < bins; ++b) {
    double h = plot_h * counts[b] / y_max;
    double x = left + slot * b;
    double y = top + plot_h - h;
    os << "<rect x=\"" << x + 1 << "\" y=\"" << y << "\" width=\"" << slot - 2 << "\" height=\"" << h << "\" fill=\""
       << palette[2] << "\"><title>" << number(lo + w * b) << " to " << number(lo + w * (b + 1)) << ": "
       << number(counts[b]) << "</title></rect>\n";
    if (counts[b] > 0) {
      os << "<text x=\"" << x + slot / 2 << "\" y=\"" << y - 3 << "\" text-anchor=\"middle\" font-size=\"10\">"
         << number(counts[b]) << "</text>\n";
    }
  }
  // Edge labels: every `step`-th edge, so each label (about 6 px per character
  // at 10 px) has room before the next.
  const int step = std::max(1, static_cast<int>(std::ceil(40.0 / slot)));
  for (int e = 0; e <= bins; e += step) {
    os << "<text class=\"edge\" x=\"" << left + slot * e << "\" y=\"" << top + plot_h + 14
       << "\" text-anchor=\"middle\" font-size=\"10\">" << number(lo + w * e) << "</text>\n";
  }
  // The lines' labels form a legend row under the axis, never over the bars.
  for (size_t i = 0; i < lines.size(); ++i) {
    double x = x_of(lines[i].value);
    const char* color = palette[3 + i % 3];
    double lx = left + 160.0 * i;
    os << "<line class=\"reference\" x1=\"" << x << "\" y1=\"" << top << "\" x2=\"" << x << "\" y2=\"" << top + plot_h
       << "\" stroke=\"" << color << "\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"><title>"
       << html_escape(lines[i].label) << "</title></line>\n"
       << "<line x1=\"" << lx << "\" y1=\"" << top + plot_h + 24 << "\" x2=\"" << lx + 18 << "\" y2=\"" << top + plot_h + 24
       << "\" stroke=\"" << color << "\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/><text x=\"" << lx + 22
       << "\" y=\"" << top + plot_h + 28 << "\" font-size=\"10\">" << html_escape(lines[i].label) << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

}  // namespace ptxbench::data
