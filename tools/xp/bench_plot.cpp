// `xp bench sweep`'s CSV and SVG (bench_plot.hpp).
#include "bench_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace xp_cli::plot {

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string num(double x, const char* fmt = "%.6g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// A log10 axis over [lo, hi], widened to whole decades (or powers of two for n).
struct Axis {
  double lo = 1, hi = 10;  // data range, log10
  double px0 = 0, px1 = 1;
  double map(double v) const { return px0 + (std::log10(v) - lo) / (hi - lo) * (px1 - px0); }
};

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                         "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

// Every other group of colours dashed, so that two series never look alike.
std::string dash(std::size_t i) {
  constexpr std::size_t kCount = sizeof kColors / sizeof kColors[0];
  return (i / (kCount / 2)) % 2 == 1 ? " stroke-dasharray=\"6,3\"" : "";
}

}  // namespace

double overhead_threshold(const Series& s) {
  if (s.points.size() < 2) return 0;
  const double base = s.points.front().ms;
  for (const Point& p : s.points)
    if (base > 0 && p.ms >= 2 * base) return p.n;
  return 0;
}

std::string csv(const std::vector<Series>& series) {
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  std::string out = "row,label,n,ms_per_call,gbps,bits_ok\n";
  for (const Series& s : series)
    for (const Point& p : s.points)
      out += s.id + "," + quote(s.label) + "," + num(p.n, "%.0f") + "," + num(p.ms, "%.9g") + "," +
             num(p.gbps, "%.6g") + "," + (p.bits_ok ? "true" : "false") + "\n";
  return out;
}

std::string svg(const std::vector<Series>& series, const std::string& title) {
  constexpr double kWidth = 1180, kLeft = 90, kPlotWidth = 700, kTop = 60, kPanel = 340, kGap = 90;
  double nlo = std::numeric_limits<double>::max(), nhi = 0, tlo = nlo, thi = 0, glo = nlo, ghi = 0;
  for (const Series& s : series)
    for (const Point& p : s.points) {
      if (p.n <= 0 || p.ms <= 0 || p.gbps <= 0) continue;
      nlo = std::min(nlo, p.n), nhi = std::max(nhi, p.n);
      tlo = std::min(tlo, p.ms), thi = std::max(thi, p.ms);
      glo = std::min(glo, p.gbps), ghi = std::max(ghi, p.gbps);
    }
  if (nhi == 0) nlo = 1, nhi = 2, tlo = 1, thi = 10, glo = 1, ghi = 10;
  Axis x{std::floor(std::log10(nlo) / std::log10(2.0)) * std::log10(2.0),
         std::ceil(std::log10(nhi) / std::log10(2.0)) * std::log10(2.0), kLeft, kLeft + kPlotWidth};
  if (x.hi <= x.lo) x.hi = x.lo + std::log10(2.0);
  auto decades = [](double lo, double hi) {
    Axis a{std::floor(std::log10(lo)), std::ceil(std::log10(hi)), 0, 0};
    if (a.hi <= a.lo) a.hi = a.lo + 1;
    return a;
  };
  const double height = kTop + 2 * kPanel + kGap + 70;
  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" + num(height) +
       "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<title>" + xml_escape(title) + "</title>\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text x=\"" + num(kLeft) + "\" y=\"28\" font-size=\"16\">" + xml_escape(title) + "</text>\n";

  // The n below which calls cost about the same whatever n (median threshold over the series).
  std::vector<double> thresholds;
  for (const Series& s : series)
    if (double t = overhead_threshold(s); t > 0) thresholds.push_back(t);
  std::sort(thresholds.begin(), thresholds.end());
  const double median_threshold = thresholds.empty() ? 0 : thresholds[thresholds.size() / 2];

  struct Panel {
    const char* name;
    const char* ylabel;
    Axis y;
    double top;
    bool time;
  };
  Axis ty = decades(tlo, thi), gy = decades(glo, ghi);
  const Panel panels[] = {{"time", "time per call (ms)", ty, kTop, true},
                          {"bandwidth", "GB/s (bytes read + written)", gy, kTop + kPanel + kGap, false}};
  for (Panel p : panels) {
    p.y.px0 = p.top + kPanel;  // log axis grows upwards
    p.y.px1 = p.top;
    o += "<g class=\"panel\" data-panel=\"" + std::string(p.name) + "\">\n";
    if (median_threshold > 0 && median_threshold > std::pow(10, x.lo)) {
      o += "<rect class=\"overhead-region\" x=\"" + num(x.px0) + "\" y=\"" + num(p.top) + "\" width=\"" +
           num(x.map(median_threshold) - x.px0) + "\" height=\"" + num(kPanel) + "\" fill=\"#eeeeee\"/>\n";
      if (p.time)
        o += "<text x=\"" + num(x.px0 + 6) + "\" y=\"" + num(p.top + 16) +
             "\" fill=\"#555555\">per-call overhead dominates (a call costs under 2x the smallest size's)</text>\n";
    }
    o += "<rect x=\"" + num(x.px0) + "\" y=\"" + num(p.top) + "\" width=\"" + num(kPlotWidth) + "\" height=\"" +
         num(kPanel) + "\" fill=\"none\" stroke=\"black\"/>\n";
    // x ticks: powers of two, labelled every other one
    const int k0 = static_cast<int>(std::lround(x.lo / std::log10(2.0)));
    const int k1 = static_cast<int>(std::lround(x.hi / std::log10(2.0)));
    for (int k = k0; k <= k1; ++k) {
      const double px = x.map(std::pow(2.0, k));
      o += "<line x1=\"" + num(px) + "\" y1=\"" + num(p.top + kPanel) + "\" x2=\"" + num(px) + "\" y2=\"" +
           num(p.top + kPanel + 5) + "\" stroke=\"black\"/>\n";
      if ((k - k0) % 2 == 0)
        o += "<text class=\"tick\" x=\"" + num(px) + "\" y=\"" + num(p.top + kPanel + 18) +
             "\" text-anchor=\"middle\">2^" + std::to_string(k) + "</text>\n";
    }
    for (int d = static_cast<int>(p.y.lo); d <= static_cast<int>(p.y.hi); ++d) {
      const double py = p.y.map(std::pow(10.0, d));
      o += "<line x1=\"" + num(x.px0) + "\" y1=\"" + num(py) + "\" x2=\"" + num(x.px1) + "\" y2=\"" + num(py) +
           "\" stroke=\"#dddddd\"/>\n";
      o += "<text class=\"tick\" x=\"" + num(x.px0 - 6) + "\" y=\"" + num(py + 4) + "\" text-anchor=\"end\">1e" +
           std::to_string(d) + "</text>\n";
    }
    o += "<text class=\"axis-label\" x=\"" + num(x.px0 + kPlotWidth / 2) + "\" y=\"" + num(p.top + kPanel + 38) +
         "\" text-anchor=\"middle\">elements n (log scale)</text>\n";
    o += "<text class=\"axis-label\" transform=\"translate(" + num(x.px0 - 58) + "," + num(p.top + kPanel / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + xml_escape(p.ylabel) + " (log scale)</text>\n";
    for (std::size_t i = 0; i < series.size(); ++i) {
      const Series& s = series[i];
      const char* color = kColors[i % (sizeof kColors / sizeof kColors[0])];
      std::string pts;
      for (const Point& q : s.points) {
        const double v = p.time ? q.ms : q.gbps;
        if (q.n <= 0 || v <= 0) continue;
        pts += num(x.map(q.n), "%.2f") + "," + num(p.y.map(v), "%.2f") + " ";
      }
      if (!pts.empty()) pts.pop_back();
      o += "<polyline class=\"series\" data-row=\"" + xml_escape(s.id) + "\" fill=\"none\" stroke=\"" + color +
           "\" stroke-width=\"1.8\"" + dash(i) + " points=\"" + pts + "\"><title>" + xml_escape(s.label) +
           "</title></polyline>\n";
      const double t = overhead_threshold(s);
      for (const Point& q : s.points) {
        const double v = p.time ? q.ms : q.gbps;
        if (q.n == t && v > 0)
          o += "<circle class=\"threshold\" data-row=\"" + xml_escape(s.id) + "\" cx=\"" + num(x.map(q.n), "%.2f") +
               "\" cy=\"" + num(p.y.map(v), "%.2f") + "\" r=\"3.5\" fill=\"" + color + "\"/>\n";
        if (!q.bits_ok && v > 0)
          o += "<text class=\"mismatch\" x=\"" + num(x.map(q.n), "%.2f") + "\" y=\"" + num(p.y.map(v), "%.2f") +
               "\" fill=\"red\" text-anchor=\"middle\">x</text>\n";
      }
    }
    o += "</g>\n";
  }
  // Legend
  const double lx = kLeft + kPlotWidth + 30;
  o += "<g class=\"legend\">\n<text x=\"" + num(lx) + "\" y=\"" + num(kTop + 4) +
       "\" font-weight=\"bold\">rows</text>\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double ly = kTop + 24 + 20 * static_cast<double>(i);
    const char* color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    o += "<line x1=\"" + num(lx) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" + num(lx + 24) + "\" y2=\"" + num(ly - 4) +
         "\" stroke=\"" + color + "\" stroke-width=\"3\"" + dash(i) + "/>\n";
    o += "<text class=\"legend-entry\" data-row=\"" + xml_escape(series[i].id) + "\" x=\"" + num(lx + 30) + "\" y=\"" +
         num(ly) + "\">" + xml_escape(series[i].label) + "</text>\n";
  }
  o += "<text x=\"" + num(lx) + "\" y=\"" + num(kTop + 44 + 20 * static_cast<double>(series.size())) +
       "\" fill=\"#555555\">dot: from here a call takes 2x the smallest size's</text>\n";
  o += "</g>\n</svg>\n";
  return o;
}

}  // namespace xp_cli::plot
