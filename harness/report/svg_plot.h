// The small SVG chart kit the HTML reports draw with: a plot area with two axes (linear or log)
// mapped to pixels, ticks on 1-2-5 steps or powers of ten with number labels (or ticks of the
// caller's, such as dates), and a legend.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
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
  // Ticks of the x axis at these values with these labels (a label's "\n" starts a second
  // line: a run's date over its commit), instead of numbers labelled by svg()'s `fx`.
  void set_x_ticks(std::vector<std::pair<double, std::string>> ticks) {
    m_xticks = std::move(ticks);
  }
  // A legend in the plot's top left corner: a swatch of each colour and what it marks.
  struct Entry {
    std::string colour, label;
  };
  void legend(const std::vector<Entry>& entries) {
    double x = kLeft + 8;
    m_legend.clear();
    for (const auto& e : entries) {
      m_legend += fmt::format(
          "<g class=\"legend\"><rect x=\"{0:.1f}\" y=\"{1:.1f}\" width=\"10\" height=\"10\" "
          "fill=\"{2}\"/><text x=\"{3:.1f}\" y=\"{4:.1f}\">{5}</text></g>\n",
          x, kTop + 6, esc(e.colour), x + 14, kTop + 15, esc(e.label));
      x += 14 + 7.0 * static_cast<double>(e.label.size()) + 18;
    }
    // On a pale ground, so that marks under it do not run into its words.
    m_legend = fmt::format(
                   "<rect class=\"legend-ground\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                   "height=\"18\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>\n",
                   kLeft + 4, kTop + 2, x - kLeft - 12) +
               m_legend;
  }
  // Axes with ticks labelled by `fx` and `fy`, then the elements added so far and the legend.
  template <class FX, class FY>
  std::string svg(const std::string& title, FX fx, FY fy) const {
    std::string s = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"{0}\" height=\"{1}\" "
        "viewBox=\"0 0 {0} {1}\"><title>{2}</title>\n",
        m_w, m_h, esc(title));
    const double x0 = kLeft, x1 = m_w - kRight, y0 = m_h - kBottom, y1 = kTop;
    std::vector<std::pair<double, std::string>> xticks = m_xticks;
    if (xticks.empty())
      for (double t : ticks(m_x.lo, m_x.hi, m_x.log)) xticks.emplace_back(t, fx(t));
    for (const auto& [t, label] : xticks) {
      std::string text;
      const auto nl = label.find('\n');
      if (nl == std::string::npos)
        text = esc(label);
      else
        text = fmt::format(
            "<tspan x=\"{0:.1f}\">{1}</tspan><tspan x=\"{0:.1f}\" dy=\"12\">{2}</tspan>", px(t),
            esc(label.substr(0, nl)), esc(label.substr(nl + 1)));
      // A label at the right edge ends there rather than run past the picture.
      const char* anchor = px(t) > x1 - 40 ? "end" : "middle";
      s += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#eaeef2\"/>"
          "<text class=\"xtick\" x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"{5}\">{4}</text>\n",
          px(t), y0, y1, y0 + 14, text, anchor);
    }
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
    return s + m_body + m_legend + "</svg>\n";
  }

 private:
  static constexpr double kLeft = 72, kRight = 16, kTop = 12, kBottom = 44;
  static double frac(const Axis& a, double v) {
    if (a.log) {
      v = std::max(v, a.lo);
      return (std::log10(v) - std::log10(a.lo)) / (std::log10(a.hi) - std::log10(a.lo));
    }
    return (v - a.lo) / (a.hi - a.lo);
  }
  Axis m_x, m_y;
  int m_w, m_h;
  std::string m_body, m_legend;
  std::vector<std::pair<double, std::string>> m_xticks;
};

}  // namespace attnprof::report::svg
