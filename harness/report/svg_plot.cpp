// The SVG chart kit's ticks and labels (svg_plot.h).
#include "harness/report/svg_plot.h"

namespace attnprof::report::svg {

std::vector<double> ticks(double lo, double hi, bool log) {
  std::vector<double> t;
  if (log) {
    for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); ++p)
      if (const double v = std::pow(10.0, p); v >= lo * 0.999 && v <= hi * 1.001) t.push_back(v);
    return t;
  }
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
  return t;
}

std::string number_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1000 || a < 0.01) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", v);
}

}  // namespace attnprof::report::svg
