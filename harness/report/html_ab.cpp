// The A/B page's drawings of one case (html_ab.h): rounds by pair of workers, each pair's
// estimate against the pooled interval, the memory figures.
#include "harness/report/html_ab.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/costmatrix/summary.h"
#include "harness/gate/paired.h"
#include "harness/report/html_page.h"
#include "harness/report/svg_plot.h"

namespace attnprof::report::html {

namespace {

using svg::Plot;

constexpr const char* kBase = "#0969da";       // a round base ran first in; a pair's estimate
constexpr const char* kHead = "#8250df";       // a round head ran first in
constexpr const char* kBand = "#dafbe1";       // the tolerance
constexpr const char* kPairShade = "#f6f8fa";  // every other pair's span of rounds
constexpr const char* kPooled = "#fff8c5";     // the pooled interval

// A round with both times: what gate::judged leaves a ratio for.
bool usable(const core::AbRound& r) {
  return r.base_ns > 0 && r.head_ns > 0;
}

}  // namespace

std::string ab_rounds_svg(const AbCase& ab, double tolerance) {
  // The rounds in pass order (the order within a pair as measured): each pair's span is one
  // stretch of the x axis.
  std::vector<core::AbRound> rounds = gate::judged(ab.rounds);
  std::stable_sort(rounds.begin(), rounds.end(),
                   [](const auto& a, const auto& b) { return a.pass < b.pass; });
  const char* which = gate::judged_on_q1(ab.rounds) ? "lower quartiles" : "batch medians";
  double lo = 1 - tolerance, hi = 1 + tolerance;
  for (const auto& r : rounds)
    if (usable(r))
      lo = std::min(lo, r.head_ns / r.base_ns), hi = std::max(hi, r.head_ns / r.base_ns);
  const double pad = (hi - lo) * 0.1;
  const double last = std::max<double>(1, static_cast<double>(rounds.size()) - 1);
  Plot plot({-0.5, last + 0.5, false, "round, by pair of workers"},
            {lo - pad, hi + pad * 3.5, false, "head / base"}, 760, 240);
  // Each pair's span: shaded for every other pair, its number at the top, its first round
  // ticked on the x axis.
  int pairs = 0;
  std::vector<std::pair<double, std::string>> ticks;
  for (std::size_t i = 0; i < rounds.size();) {
    ticks.emplace_back(static_cast<double>(i), fmt::format("{}", i + 1));
    std::size_t j = i;
    while (j < rounds.size() && rounds[j].pass == rounds[i].pass) ++j;
    const double x0 = plot.px(static_cast<double>(i) - 0.5);
    const double x1 = plot.px(static_cast<double>(j) - 0.5);
    plot.add(fmt::format(
        "<rect class=\"pair-span\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"{}\"><title>pair {} of workers: {} round(s)</title></rect>",
        x0, plot.py(hi + pad * 3.5), x1 - x0, plot.py(lo - pad) - plot.py(hi + pad * 3.5),
        pairs % 2 ? kPairShade : "none", rounds[i].pass + 1, j - i));
    // Under the legend, above the rounds (the headroom above the highest is for it).
    plot.add(fmt::format(
        "<text class=\"pair-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">pair {}"
        "</text>",
        (x0 + x1) / 2, plot.py(hi + pad * 3.5) + 34, rounds[i].pass + 1));
    ++pairs;
    i = j;
  }
  plot.add(fmt::format(
      "<rect class=\"band\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
      "fill=\"{}\" fill-opacity=\"0.7\"><title>tolerance ±{:.1f}%</title></rect>",
      plot.px(-0.5), plot.py(1 + tolerance), plot.px(last + 0.5) - plot.px(-0.5),
      plot.py(1 - tolerance) - plot.py(1 + tolerance), kBand, 100 * tolerance));
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const auto& r = rounds[i];
    if (!usable(r)) continue;
    plot.add(
        fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\">"
                    "<title>pair {}, round {}: base {}, head {} ({} first)</title></circle>",
                    plot.px(static_cast<double>(i)), plot.py(r.head_ns / r.base_ns),
                    r.head_first() ? kHead : kBase, r.pass + 1, r.round + 1, dur(r.base_ns),
                    dur(r.head_ns), r.head_first() ? "head" : "base"));
  }
  plot.set_x_ticks(std::move(ticks));
  plot.legend({{kBase, "base ran first"},
               {kHead, "head ran first"},
               {kBand, fmt::format("tolerance ±{:.1f}%", 100 * tolerance)}});
  return plot.svg(
      fmt::format("A/B rounds ({}) of {} pair(s) of workers: {}", which, pairs, ab.key),
      [](double x) { return fmt::format("{:g}", x + 1); },
      [](double v) { return fmt::format("{:.3f}", v); });
}

std::string ab_pairs_svg(const AbCase& ab, const gate::CaseVerdict& v) {
  const gate::TwoLevel t = gate::two_level(ab.rounds);
  if (t.per_pair.empty()) return "";
  const bool pooled = std::isfinite(v.ratio) && v.ratio > 0;
  const bool interval =
      pooled && std::isfinite(v.ci_low) && std::isfinite(v.ci_high) && v.ci_high > 0;
  // ±2 standard errors of each pair's own estimate: about its 95% interval.
  const auto low = [](const auto& p) { return std::exp(p.shift - 2 * p.se); };
  const auto high = [](const auto& p) { return std::exp(p.shift + 2 * p.se); };
  double lo = 1 - v.tolerance, hi = 1 + v.tolerance;
  for (const auto& p : t.per_pair) lo = std::min(lo, low(p)), hi = std::max(hi, high(p));
  if (interval) lo = std::min(lo, v.ci_low), hi = std::max(hi, v.ci_high);
  const double pad = (hi - lo) * 0.1;
  const double k = static_cast<double>(t.per_pair.size());
  Plot plot({0.5, k + 0.5, false, "pair of workers"},
            {lo - pad, hi + pad * 3.5, false, "head / base"}, 760, 220);
  if (interval)
    plot.add(fmt::format(
        "<rect class=\"pooled\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"{}\"><title>pooled interval [{:.4f}, {:.4f}]</title></rect>",
        plot.px(0.5), plot.py(v.ci_high), plot.px(k + 0.5) - plot.px(0.5),
        plot.py(v.ci_low) - plot.py(v.ci_high), kPooled, v.ci_low, v.ci_high));
  if (pooled)
    plot.add(fmt::format(
        "<line class=\"pooled-estimate\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"#9a6700\" stroke-width=\"2\"><title>pooled estimate {:.4f}x</title></line>",
        plot.px(0.5), plot.py(v.ratio), plot.px(k + 0.5), plot.py(v.ratio), v.ratio));
  for (double edge : {1 - v.tolerance, 1 + v.tolerance})
    if (v.tolerance > 0)
      plot.add(fmt::format(
          "<line class=\"tolerance\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
          "stroke=\"#1a7f37\" stroke-dasharray=\"4 3\"/>",
          plot.px(0.5), plot.py(edge), plot.px(k + 0.5), plot.py(edge)));
  std::vector<std::pair<double, std::string>> ticks;
  for (std::size_t i = 0; i < t.per_pair.size(); ++i) {
    const auto& p = t.per_pair[i];
    const double x = plot.px(static_cast<double>(i) + 1);
    ticks.emplace_back(static_cast<double>(i) + 1, fmt::format("{}", p.pass + 1));
    plot.add(fmt::format(
        "<g class=\"pair\"><line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"{3}\"/><circle class=\"point\" cx=\"{0:.1f}\" cy=\"{4:.1f}\" r=\"4\" "
        "fill=\"{3}\"><title>pair {5}: {6:.4f}x [{7:.4f}, {8:.4f}] over {9} rounds</title>"
        "</circle></g>",
        x, plot.py(low(p)), plot.py(high(p)), kBase, plot.py(std::exp(p.shift)), p.pass + 1,
        std::exp(p.shift), low(p), high(p), p.rounds));
  }
  plot.set_x_ticks(std::move(ticks));
  std::vector<Plot::Entry> legend = {{kBase, "a pair's estimate ±2 s.e."}};
  if (interval)
    legend.push_back(
        {kPooled, fmt::format("pooled: {:.4f}x [{:.4f}, {:.4f}]", v.ratio, v.ci_low, v.ci_high)});
  plot.legend(legend);
  return plot.svg(
      fmt::format("each pair's estimate and the pooled interval ({} pairs): {}", t.pairs, ab.key),
      [](double x) { return fmt::format("{:g}", x); },
      [](double y) { return fmt::format("{:.3f}", y); });
}

std::string ab_memory_table(const std::vector<MemoryDiff>& memory) {
  if (std::all_of(memory.begin(), memory.end(),
                  [](const MemoryDiff& m) { return m.base == 0 && m.head == 0; }))
    return "";
  std::vector<std::vector<std::string>> body;
  for (const auto& m : memory)
    body.push_back({m.metric, costmatrix::format_memory(m.metric, m.base),
                    costmatrix::format_memory(m.metric, m.head), m.moved ? "moved" : ""});
  return "<p>Memory over the measured calls:</p>\n" + table({"figure", "base", "head", ""}, body);
}

}  // namespace attnprof::report::html
