#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace dynacomm::report {

namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                    "#59a14f", "#edc948", "#b07aa1", "#9c755f"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&')
      o += "&amp;";
    else if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else
      o += c;
  }
  return o;
}

std::string fmt(double v) {
  char b[32];
  if (std::abs(v) >= 100 || v == std::floor(v))
    std::snprintf(b, sizeof b, "%.0f", v);
  else if (std::abs(v) >= 1)
    std::snprintf(b, sizeof b, "%.1f", v);
  else
    std::snprintf(b, sizeof b, "%.2g", v);
  return b;
}

struct Svg {
  std::ostringstream o;
  Svg(int w, int h) {
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" viewBox=\"0 0 " << w << " " << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
         "fill=\"white\"/>\n";
  }
  void text(double x, double y, const std::string& s, const char* anchor = "middle",
            int size = 12, const char* extra = "") {
    o << "<text x=\"" << x << "\" y=\"" << y << "\" text-anchor=\"" << anchor
      << "\" font-size=\"" << size << "\" " << extra << ">" << esc(s) << "</text>\n";
  }
  void line(double x1, double y1, double x2, double y2, const char* stroke = "#333",
            double width = 1) {
    o << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2
      << "\" stroke=\"" << stroke << "\" stroke-width=\"" << width << "\"/>\n";
  }
  void rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& title = "", double opacity = 1) {
    o << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << std::max(0.0, w) << "\" height=\""
      << std::max(0.0, h) << "\" fill=\"" << fill << "\"";
    if (opacity < 1) o << " fill-opacity=\"" << opacity << "\"";
    o << ">";
    if (!title.empty()) o << "<title>" << esc(title) << "</title>";
    o << "</rect>\n";
  }
  std::string done() {
    o << "</svg>\n";
    return o.str();
  }
};

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, count);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
  return t;
}

std::string render(const BarChart& c) {
  const int left = 70, right = 20, top = 50, bottom = 80;
  const int bar_w = 56, gap = 24;
  const int width = left + right + static_cast<int>(c.bars.size()) * (bar_w + gap) + gap;
  const int height = 420;
  const double plot_h = height - top - bottom;
  double hi = 0;
  for (const Bar& b : c.bars) hi = std::max({hi, b.value, b.high});
  const std::vector<double> ticks = nice_ticks(0, hi * 1.1);
  const double top_value = ticks.empty() ? 1 : std::max(ticks.back(), hi * 1.1);
  auto y = [&](double v) { return top + plot_h * (1 - v / top_value); };
  Svg s(std::max(width, 360), height);
  s.text(std::max(width, 360) / 2.0, 24, c.title, "middle", 15, "font-weight=\"bold\"");
  for (double t : ticks) {
    s.line(left, y(t), width - right, y(t), "#ddd");
    s.text(left - 6, y(t) + 4, fmt(t), "end");
  }
  s.line(left, top, left, top + plot_h);
  s.line(left, top + plot_h, width - right, top + plot_h);
  s.text(18, top + plot_h / 2, c.y_label, "middle", 12,
         ("transform=\"rotate(-90 18 " + std::to_string(top + plot_h / 2) + ")\"").c_str());
  for (std::size_t i = 0; i < c.bars.size(); ++i) {
    const Bar& b = c.bars[i];
    const double x = left + gap + static_cast<double>(i) * (bar_w + gap);
    s.rect(x, y(b.value), bar_w, top + plot_h - y(b.value), kPalette[i % 8],
           b.label + ": median " + fmt(b.value) + ", min " + fmt(b.low) + ", max " + fmt(b.high));
    const double cx = x + bar_w / 2.0;
    s.line(cx, y(b.low), cx, y(b.high), "#000", 1.5);
    s.line(cx - 8, y(b.low), cx + 8, y(b.low), "#000", 1.5);
    s.line(cx - 8, y(b.high), cx + 8, y(b.high), "#000", 1.5);
    s.text(cx, y(std::max(b.value, b.high)) - 6, b.note.empty() ? fmt(b.value) : b.note);
    s.text(cx, top + plot_h + 18, b.label);
  }
  s.text(std::max(width, 360) / 2.0, height - 20,
         "bars: median; whiskers: min-max of the measured iterations", "middle", 11,
         "fill=\"#555\"");
  return s.done();
}

std::string render(const LineChart& c) {
  const int width = 640, height = 420, left = 70, right = 170, top = 50, bottom = 60;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double xlo = 1e300, xhi = -1e300, yhi = 0;
  for (const Series& s : c.series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      xlo = std::min(xlo, s.x[i]);
      xhi = std::max(xhi, s.x[i]);
      yhi = std::max(yhi, s.y[i]);
    }
  if (xlo > xhi) xlo = 0, xhi = 1;
  if (!std::isnan(c.x_min)) xlo = c.x_min;
  if (!std::isnan(c.x_max)) xhi = c.x_max;
  auto tx = [&](double v) {
    if (c.log_x && xlo > 0) {
      const double a = std::log10(xlo), b = std::log10(xhi);
      return left + plot_w * (b > a ? (std::log10(v) - a) / (b - a) : 0.5);
    }
    return left + plot_w * (xhi > xlo ? (v - xlo) / (xhi - xlo) : 0.5);
  };
  const std::vector<double> yt = nice_ticks(0, yhi * 1.1);
  const double ytop = yt.empty() ? 1 : std::max(yt.back(), yhi * 1.1);
  auto ty = [&](double v) { return top + plot_h * (1 - v / ytop); };
  Svg s(width, height);
  s.text(width / 2.0 - right / 2.0, 24, c.title, "middle", 15, "font-weight=\"bold\"");
  for (double t : yt) {
    s.line(left, ty(t), left + plot_w, ty(t), "#ddd");
    s.text(left - 6, ty(t) + 4, fmt(t), "end");
  }
  std::vector<double> xs;
  if (c.continuous_x) {
    for (double v : nice_ticks(xlo, xhi))
      if (v >= xlo && v <= xhi) xs.push_back(v);
  } else {
    for (const Series& ser : c.series)
      for (double v : ser.x)
        if (std::find(xs.begin(), xs.end(), v) == xs.end()) xs.push_back(v);
  }
  for (double v : xs) {
    s.line(tx(v), top + plot_h, tx(v), top + plot_h + 5);
    s.text(tx(v), top + plot_h + 18, fmt(v));
  }
  s.line(left, top, left, top + plot_h);
  s.line(left, top + plot_h, left + plot_w, top + plot_h);
  s.text(left + plot_w / 2, height - 16, c.x_label);
  s.text(18, top + plot_h / 2, c.y_label, "middle", 12,
         ("transform=\"rotate(-90 18 " + std::to_string(top + plot_h / 2) + ")\"").c_str());
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const Series& ser = c.series[k];
    std::ostringstream pts;
    for (std::size_t i = 0; i < ser.x.size(); ++i) pts << tx(ser.x[i]) << "," << ty(ser.y[i]) << " ";
    s.o << "<polyline fill=\"none\" stroke=\"" << kPalette[k % 8]
        << "\" stroke-width=\"2\" points=\"" << pts.str() << "\"/>\n";
    for (std::size_t i = 0; i < ser.x.size() && !c.continuous_x; ++i)
      s.o << "<circle cx=\"" << tx(ser.x[i]) << "\" cy=\"" << ty(ser.y[i]) << "\" r=\"3\" fill=\""
          << kPalette[k % 8] << "\"/>\n";
    const double ly = top + 10 + 20.0 * static_cast<double>(k);
    s.line(width - right + 15, ly, width - right + 40, ly, kPalette[k % 8], 3);
    s.text(width - right + 46, ly + 4, ser.name, "start");
  }
  return s.done();
}

std::string stack(const std::vector<std::string>& svgs) {
  auto attr = [](const std::string& svg, const std::string& name) {
    const auto at = svg.find(" " + name + "=\"");
    if (at == std::string::npos) return 0;
    return std::atoi(svg.c_str() + at + name.size() + 3);
  };
  int width = 0, height = 0;
  for (const auto& svg : svgs) width = std::max(width, attr(svg, "width"));
  std::string body;
  for (const auto& svg : svgs) {
    // Each chart's content, moved down: a group, not a nested <svg> (which not every
    // renderer places), with its background sized to the chart, not to the whole canvas.
    const auto open = svg.find("<svg");
    const auto content = open == std::string::npos ? open : svg.find('>', open);
    const auto close = svg.rfind("</svg>");
    if (content == std::string::npos || close == std::string::npos || close < content) continue;
    const int h = attr(svg, "height");
    std::string inner = svg.substr(content + 1, close - content - 1);
    const std::string full = "width=\"100%\" height=\"100%\"";
    for (auto at = inner.find(full); at != std::string::npos; at = inner.find(full, at))
      inner.replace(at, full.size(),
                    "width=\"" + std::to_string(attr(svg, "width")) + "\" height=\"" +
                        std::to_string(h) + "\"");
    body += "<g transform=\"translate(0," + std::to_string(height) + ")\">" + inner + "</g>\n";
    height += h;
  }
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << body << "</svg>\n";
  return o.str();
}

std::string render(const GanttChart& c) {
  const int width = 940, left = 170, right = 20, top = 50, lane_h = 14, row_gap = 16;
  const int row_h = 3 * lane_h + row_gap;
  const int height = top + static_cast<int>(c.rows.size()) * row_h + 70;
  const double plot_w = width - left - right;
  double begin = 0, end = 0;  // a full-duplex row's context starts before 0
  for (const GanttRow& r : c.rows) {
    end = std::max(end, r.period_ms);
    for (const Interval& i : r.intervals) {
      begin = std::min(begin, i.start_ms);
      end = std::max(end, i.end_ms);
    }
  }
  const std::vector<double> ticks = nice_ticks(begin, std::max(end, begin + 1.0), 8);
  const double xmin = std::min(ticks.empty() ? begin : ticks.front(), begin);
  const double xmax = std::max(ticks.empty() ? 1.0 : ticks.back(), end);
  auto tx = [&](double v) { return left + plot_w * (v - xmin) / (xmax - xmin); };
  auto colour = [](const std::string& kind) {
    if (kind == "forward") return "#4e79a7";
    if (kind == "backward") return "#a0cbe8";
    if (kind == "pull") return "#59a14f";
    if (kind == "push") return "#e15759";
    return "#999";
  };
  Svg s(width, height);
  s.text(width / 2.0, 24, c.title, "middle", 15, "font-weight=\"bold\"");
  const double bottom_y = top + static_cast<double>(c.rows.size()) * row_h;
  for (double t : ticks) {
    s.line(tx(t), top - 4, tx(t), bottom_y, "#eee");
    s.text(tx(t), bottom_y + 16, fmt(t));
  }
  s.text(left + plot_w / 2, bottom_y + 34, "time since the iteration started (ms)");
  const char* lanes[] = {"compute", "down", "up"};
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    const double y0 = top + static_cast<double>(r) * row_h;
    s.text(left - 56, y0 + 1.5 * lane_h + 4, c.rows[r].label, "end", 12, "font-weight=\"bold\"");
    for (int l = 0; l < 3; ++l) s.text(left - 4, y0 + l * lane_h + 11, lanes[l], "end", 10);
    for (const Interval& i : c.rows[r].intervals)
      s.rect(tx(i.start_ms), y0 + i.lane * lane_h + 1, tx(i.end_ms) - tx(i.start_ms), lane_h - 2,
             colour(i.kind),
             (i.context ? "neighbouring iteration's " : "") + i.kind + " " + fmt(i.start_ms) + "-" +
                 fmt(i.end_ms) + " ms",
             i.context ? 0.3 : 1.0);
    if (const double p = c.rows[r].period_ms; p > 0) {  // this iteration's start and the next's
      s.line(tx(0), y0 - 2, tx(0), y0 + 3 * lane_h + 2, "#000", 1.5);
      s.line(tx(p), y0 - 2, tx(p), y0 + 3 * lane_h + 2, "#000", 1.5);
      s.text(tx(p) + 3, y0 - 3, "next iteration: period " + fmt(p) + " ms", "start", 10);
    }
  }
  if (begin < 0)
    s.text(left + plot_w / 2, bottom_y + 50,
           "full duplex: faded bars are the neighbouring iterations' work overlapping this one",
           "middle", 11);
  double lx = left;
  for (const char* k : {"forward", "backward", "pull", "push"}) {
    s.rect(lx, height - 22, 14, 10, colour(k));
    s.text(lx + 18, height - 13, k, "start", 11);
    lx += 90;
  }
  return s.done();
}

}  // namespace dynacomm::report
