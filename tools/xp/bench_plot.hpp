#pragma once

// The outputs of `xp bench sweep` besides its JSON: a CSV table and an SVG plot of time per call
// and GB/s against n (both log-log), one series per row, showing where the per-call overhead stops
// mattering. Plain functions over plain data, so that a test can check them without a GPU.

#include <string>
#include <vector>

namespace xp_cli::plot {

struct Point {
  double n = 0;     // elements
  double ms = 0;    // time per call
  double gbps = 0;  // bytes read plus written per second / 1e9
  bool bits_ok = true;
};

struct Series {
  std::string id, label;
  std::vector<Point> points;  // increasing n
};

// The smallest n from which a call takes at least twice as long as at the series' smallest n:
// from there on the per-call overhead is under half of the time. 0 when the series never gets there.
double overhead_threshold(const Series& s);

// row,label,n,ms_per_call,gbps,bits_ok with a header line; labels quoted as RFC 4180 asks.
std::string csv(const std::vector<Series>& series);

// A standalone SVG document (two panels, axes labelled, a legend, one polyline per series and
// panel with data-row="<id>", the overhead threshold of each series marked).
std::string svg(const std::vector<Series>& series, const std::string& title);

}  // namespace xp_cli::plot
