// The small SVG chart kit the HTML reports draw with: a plot area with two axes (linear or log)
// mapped to pixels, ticks on 1-2-5 steps or powers of ten, and number labels.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "harness/report/html_page.h"

namespace attnprof::report::svg {

using html::esc;

// Tick values for [lo, hi]: 1-2-5 steps on a linear axis, powers of ten on a log axis.
std::vector<double> ticks(double lo, double hi, bool log);
// "0", "0.5", "250", "1e+04": short labels for an axis.
std::string number_label(double v);

// A plot area with two axes mapped to pixels, drawn into one <svg>.
class Plot {
 public:
  struct Axis {
    double lo = 0, hi = 1;
    bool log = false;
    std::string label;
  };
  Plot(Axis x, Axis y, int width = 760, int height = 300)
      : m_x(x), m_y(y), m_w(width), m_h(height) {
    for (Axis* a : {&m_x, &m_y}) {
      if (a->log) {
        a->lo = std::max(a->lo, 1e-12);
        a->hi = std::max(a->hi, a->lo * 10);
      }
      if (!(a->hi > a->lo)) a->hi = a->lo + (a->lo != 0 ? std::abs(a->lo) * 0.1 : 1);
    }
  }
  double px(double x) const { return kLeft + frac(m_x, x) * (m_w - kLeft - kRight); }
  double py(double y) const { return m_h - kBottom - frac(m_y, y) * (m_h - kTop - kBottom); }
  void add(const std::string& element) { m_body += element + "\n"; }
  // Axes with ticks labelled by `fx` and `fy`, then the elements added so far.
  template <class FX, class FY>
  std::string svg(const std::string& title, FX fx, FY fy) const {
    std::string s = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"{0}\" height=\"{1}\" "
        "viewBox=\"0 0 {0} {1}\"><title>{2}</title>\n",
        m_w, m_h, esc(title));
    const double x0 = kLeft, x1 = m_w - kRight, y0 = m_h - kBottom, y1 = kTop;
    for (double t : ticks(m_x.lo, m_x.hi, m_x.log))
      s += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#eaeef2\"/>"
          "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
          px(t), y0, y1, y0 + 14, esc(fx(t)));
    for (double t : ticks(m_y.lo, m_y.hi, m_y.log))
      s += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#eaeef2\"/>"
          "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
          x0, py(t), x1, x0 - 4, py(t) + 4, esc(fy(t)));
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
        "stroke=\"#8c959f\"/>\n",
        x0, y1, x1 - x0, y0 - y1);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     (x0 + x1) / 2, m_h - 4, esc(m_x.label));
    s += fmt::format(
        "<text x=\"12\" y=\"{:.1f}\" text-anchor=\"middle\" "
        "transform=\"rotate(-90 12 {:.1f})\">{}</text>\n",
        (y0 + y1) / 2, (y0 + y1) / 2, esc(m_y.label));
    return s + m_body + "</svg>\n";
  }

 private:
  static constexpr double kLeft = 72, kRight = 16, kTop = 12, kBottom = 40;
  static double frac(const Axis& a, double v) {
    if (a.log) {
      v = std::max(v, a.lo);
      return (std::log10(v) - std::log10(a.lo)) / (std::log10(a.hi) - std::log10(a.lo));
    }
    return (v - a.lo) / (a.hi - a.lo);
  }
  Axis m_x, m_y;
  int m_w, m_h;
  std::string m_body;
};

}  // namespace attnprof::report::svg
