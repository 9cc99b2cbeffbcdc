// The self-contained HTML reports (html.h): a run, a gate's verdicts and a case's history,
// with their roofline, A/B rounds and history charts drawn as inline SVG.
#include "harness/report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "harness/core/stability.h"
#include "harness/costmatrix/roofline.h"
#include "harness/costmatrix/summary.h"
#include "harness/gate/annotations.h"
#include "harness/gate/paired.h"
#include "harness/report/findings.h"
#include "harness/report/format.h"
#include "harness/report/html_ab.h"
#include "harness/report/html_page.h"
#include "harness/report/results.h"
#include "harness/report/svg_plot.h"
#include "harness/store/history.h"
#include "harness/util/error.h"
#include "harness/util/format.h"

namespace attnprof::report {
namespace {

using html::date;
using html::dur;
using html::esc;
using html::page;
using html::table;
using svg::number_label;
using svg::Plot;

struct RooflinePoint {
  std::string label, bound;
  double intensity = 0, tflops = 0;
};

// Log-log: arithmetic intensity (FLOP/byte) against TFLOP/s, the device's roof where known.
std::string roofline_svg(const std::vector<RooflinePoint>& points, Peaks peaks) {
  double xlo = 1e9, xhi = 0, ylo = 1e9, yhi = 0;
  for (const auto& p : points) {
    xlo = std::min(xlo, p.intensity), xhi = std::max(xhi, p.intensity);
    ylo = std::min(ylo, p.tflops), yhi = std::max(yhi, p.tflops);
  }
  const bool roof = peaks.tflops > 0 && peaks.gbps > 0;
  const double ridge = roof ? peaks.tflops * 1000 / peaks.gbps : 0;
  if (roof) {
    xlo = std::min(xlo, ridge / 10), xhi = std::max(xhi, ridge * 10);
    yhi = std::max(yhi, peaks.tflops);
  }
  Plot plot({std::pow(10.0, std::floor(std::log10(xlo))),
             std::pow(10.0, std::ceil(std::log10(xhi))), true, "arithmetic intensity (FLOP/byte)"},
            {std::pow(10.0, std::floor(std::log10(ylo))),
             std::pow(10.0, std::ceil(std::log10(yhi * 1.5))), true, "TFLOP/s"});
  if (roof) {
    const double a = std::pow(10.0, std::floor(std::log10(xlo)));
    const double b = std::pow(10.0, std::ceil(std::log10(xhi)));
    // "50 TFLOP/s, 2000 GB/s"; a CPU's few GFLOP/s keep three figures ("0.0431 TFLOP/s").
    const std::string text = fmt::format("{:.3g} TFLOP/s, {:.0f} GB/s", peaks.tflops, peaks.gbps);
    plot.add(fmt::format(
        "<polyline class=\"roof\" fill=\"none\" stroke=\"#cf222e\" stroke-width=\"2\" "
        "points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"><title>peaks: {}</title></polyline>",
        plot.px(a), plot.py(peaks.gbps * a / 1000), plot.px(ridge), plot.py(peaks.tflops),
        plot.px(b), plot.py(peaks.tflops), text));
    plot.add(fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#cf222e\">{}</text>",
                         plot.px(ridge) + 6, plot.py(peaks.tflops) + 14, text));
  }
  // Each dot numbered beside it; the table under the chart says which case each number is.
  std::vector<std::vector<std::string>> marks;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    plot.add(
        fmt::format("<circle class=\"point\" cx=\"{0:.1f}\" cy=\"{1:.1f}\" r=\"4\" "
                    "fill=\"#0969da\"><title>{2}: {3:.3g} FLOP/byte, {4:.3g} TFLOP/s</title>"
                    "</circle><text class=\"mark\" x=\"{5:.1f}\" y=\"{6:.1f}\">{7}</text>",
                    plot.px(p.intensity), plot.py(p.tflops), esc(p.label), p.intensity, p.tflops,
                    plot.px(p.intensity) + 6, plot.py(p.tflops) - 6, i + 1));
    marks.push_back({std::to_string(i + 1), p.label, fmt::format("{:.3g}", p.intensity),
                     fmt::format("{:.3g}", p.tflops), p.bound});
  }
  if (roof)
    plot.legend({{"#0969da", "case (numbered below)"}, {"#cf222e", "roof: " + peaks.source}});
  std::string out = plot.svg("roofline", number_label, number_label);
  out += table({"mark", "case", "FLOP/byte", "TFLOP/s", "bound"}, marks);
  if (!roof)
    out +=
        "<p class=\"muted\">Device peaks unknown for these cases: no roof drawn (a GPU's "
        "come from its properties, a CPU's from the worker's probe in the traced pass, which "
        "<code>run --no-trace</code> leaves out; or set "
        "<code>hardware.peak_tflops</code> and <code>hardware.peak_gbps</code> in the "
        "scenario).</p>\n";
  return out;
}

std::vector<RooflinePoint> roofline_points(const std::vector<const core::CaseResult*>& cases,
                                           Peaks& peaks) {
  std::vector<RooflinePoint> points;
  for (const auto* c : cases) {
    auto tf = c->metrics.find("throughput.tflops");
    auto gb = c->metrics.find("bandwidth.achieved_gbps");
    if (c->spec.level != core::Level::kernel || tf == c->metrics.end() || gb == c->metrics.end() ||
        tf->second <= 0 || gb->second <= 0)
      continue;
    std::string bound;
    for (const char* b : {"memory-bound", "compute-bound", "launch-bound"})
      if (c->metrics.count(costmatrix::bound_metric(b))) bound = b;
    points.push_back({c->spec.key, bound, tf->second * 1000 / gb->second, tf->second});
    const Peaks p = case_peaks(*c);
    if (p.tflops > peaks.tflops) peaks.tflops = p.tflops, peaks.source = p.source;
    peaks.gbps = std::max(peaks.gbps, p.gbps);
  }
  return points;
}

std::string cost_table(const core::CaseResult& c, std::size_t rows = 25) {
  if (c.cost.empty()) return "<p class=\"muted\">No cost matrix (traced pass off or failed).</p>\n";
  std::vector<const core::CostRow*> sorted;
  for (const auto& r : c.cost) sorted.push_back(&r);
  const bool device =
      std::any_of(c.cost.begin(), c.cost.end(), [](const auto& r) { return r.device_self_ns > 0; });
  std::stable_sort(sorted.begin(), sorted.end(), [&](auto* a, auto* b) {
    return (device ? a->device_self_ns : a->cpu_self_ns) >
           (device ? b->device_self_ns : b->cpu_self_ns);
  });
  std::vector<std::vector<std::string>> body;
  for (std::size_t i = 0; i < sorted.size() && i < rows; ++i) {
    const auto& r = *sorted[i];
    std::string kernels;
    for (const auto& [k, n] : r.kernels)
      kernels += (kernels.empty() ? "" : ", ") + k + " ×" + std::to_string(n);
    body.push_back({r.op, r.input_shapes, std::to_string(r.calls), dur(r.cpu_self_ns),
                    dur(r.cpu_total_ns), dur(r.device_self_ns), dur(r.device_total_ns),
                    r.share > 0 ? fmt::format("{:.1f}%", 100 * r.share) : "",
                    r.bytes_allocated ? util::format_bytes(double(r.bytes_allocated)) : "",
                    kernels});
  }
  std::string out = table({"op", "input shapes", "calls", "CPU self", "CPU total", "device self",
                           "device total", "share", "allocated", "kernels"},
                          body);
  if (sorted.size() > rows)
    out += fmt::format("<p class=\"muted\">{} more op(s) not shown.</p>\n", sorted.size() - rows);
  return out;
}

std::string op_diff_table(const std::vector<OpDiff>& ops, std::size_t rows = 20) {
  std::vector<std::vector<std::string>> body;
  for (std::size_t i = 0; i < ops.size() && i < rows; ++i) {
    const OpDiff& o = ops[i];
    body.push_back({(o.kernel ? "kernel " : "") + o.name, o.shapes, std::to_string(o.base_calls),
                    std::to_string(o.head_calls), dur(o.base_self_ns), dur(o.head_self_ns),
                    dur(o.base_total_ns), dur(o.head_total_ns),
                    util::format_duration(o.delta_ns())});
  }
  return table({"op / kernel", "shapes", "base calls", "head calls", "base self/call",
                "head self/call", "base total/call", "head total/call", "Δ self (all calls)"},
               body);
}

// The findings beside the time verdicts (gate/findings.h), worst verdict first; "" when none.
std::string findings_section(const std::vector<const gate::CaseVerdict*>& sorted) {
  std::vector<std::vector<std::string>> body;
  std::vector<std::string> classes;
  for (const auto* v : sorted)
    for (const auto& f : v->findings.list) {
      body.push_back({v->key, finding_text(f), f.fails ? "fails" : "warning"});
      classes.push_back(f.fails ? "regression" : "inconclusive");
    }
  if (body.empty()) return "";
  return "<h2>Findings beside the time verdicts</h2>\n" +
         table({"case", "finding", "gate"}, body, classes);
}

// "Run 0f1e2d3c, started 2026-11-30 10:37, commit 4d5e6f7a8b9c on branch main; device ...": a
// field the run did not record is left out, never printed empty.
std::string run_line(const core::Run& run) {
  auto field = [&](const char* k) {
    auto it = run.env.fields.find(k);
    return it == run.env.fields.end() ? std::string("?") : it->second;
  };
  std::string s = "<p>Run <code>" + esc(run.id) + "</code>";
  if (run.started_ns > 0) s += ", started " + esc(date(run.started_ns));
  s += run.git_commit.empty() ? ", no commit recorded"
                              : ", commit <code>" + esc(run.git_commit.substr(0, 12)) + "</code>";
  if (!run.git_branch.empty()) s += " on branch <code>" + esc(run.git_branch) + "</code>";
  return s + fmt::format("; device <b>{}</b>, environment <code>{}</code>.</p>\n",
                         esc(field("device.name")), esc(run.env.fingerprint()));
}

std::string case_section(const core::CaseResult& c) {
  std::string s = "<details><summary><code>" + esc(c.spec.key) + "</code>";
  if (c.summary.n > 0) s += " — median " + esc(dur(c.summary.median_ns));
  s += "</summary>\n";
  if (!c.message.empty()) s += "<p>" + esc(c.message) + "</p>\n";
  s += cost_table(c);
  if (const std::string summary = costmatrix::render_summary(c); !summary.empty())
    s += "<pre class=\"summary\">" + esc(summary) + "</pre>\n";
  return s + "</details>\n";
}

// The history plot's vertical extent: the runs' medians and intervals, padded.
struct HistoryRange {
  double lo = 1e300, hi = 0, pad = 0;
  double top() const { return hi + pad; }
  double bottom() const { return std::max(0.0, lo - pad); }
};

HistoryRange history_range(const store::CaseHistory& h) {
  HistoryRange r;
  for (const auto& p : h.points) {
    r.lo = std::min({r.lo, p.median_ns, p.ci_low_ns > 0 ? p.ci_low_ns : p.median_ns});
    r.hi = std::max({r.hi, p.median_ns, p.ci_high_ns});
  }
  r.pad = std::max((r.hi - r.lo) * 0.1, r.hi * 0.01);
  return r;
}

// Each run's median as a line and a point, over the band of its interval.
void plot_history_runs(Plot& plot, const std::vector<store::HistoryPoint>& points) {
  std::string band_top, band_bottom, line;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    band_top += fmt::format("{:.1f},{:.1f} ", plot.px(i),
                            plot.py(p.ci_high_ns > 0 ? p.ci_high_ns : p.median_ns));
    line += fmt::format("{:.1f},{:.1f} ", plot.px(i), plot.py(p.median_ns));
  }
  for (std::size_t i = points.size(); i-- > 0;) {
    const auto& p = points[i];
    band_bottom += fmt::format("{:.1f},{:.1f} ", plot.px(i),
                               plot.py(p.ci_low_ns > 0 ? p.ci_low_ns : p.median_ns));
  }
  plot.add("<polygon class=\"band\" fill=\"#ddf4ff\" points=\"" + band_top + band_bottom +
           "\"><title>confidence interval of each run's median</title></polygon>");
  plot.add(
      "<polyline class=\"series\" fill=\"none\" stroke=\"#0969da\" stroke-width=\"1.5\" "
      "points=\"" +
      line + "\"/>");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    plot.add(
        fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#0969da\">"
                    "<title>{} {} ({}): {}</title></circle>",
                    plot.px(i), plot.py(p.median_ns), esc(date(p.started_ns)),
                    esc(p.commit.substr(0, 12)), esc(p.branch), esc(dur(p.median_ns))));
  }
}

// A dashed line between the runs on either side of each change point, its change written beside
// it under the legend's band (svg_plot.h: the top 20 px, where the legend would hide it), on the
// side whose medians are lower: left of a rise, right of a fall, where the top is empty.
void plot_history_changes(Plot& plot, const store::CaseHistory& h, const HistoryRange& r) {
  for (const auto& c : h.changes) {
    const double x = plot.px(c.point.index - 0.5);
    const bool rise = c.point.relative_change > 0;
    plot.add(fmt::format(
        "<line class=\"change\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"#cf222e\" stroke-dasharray=\"4 3\"><title>change {3:+.1f}% between {4} and "
        "{5}</title></line><text x=\"{6:.1f}\" y=\"{7:.1f}\" text-anchor=\"{8}\" "
        "fill=\"#cf222e\">{3:+.1f}%</text>",
        x, plot.py(r.top()), plot.py(r.bottom()), 100 * c.point.relative_change,
        esc(c.commit_before.substr(0, 12)), esc(c.commit_after.substr(0, 12)), rise ? x - 4 : x + 4,
        plot.py(r.top()) + 34, rise ? "end" : "start"));
  }
}

// A marker under each annotation: at its run when it names one, else at the first run after it
// was made; none when no run matches.
void plot_history_annotations(Plot& plot, const store::CaseHistory& h, const HistoryRange& r) {
  for (const auto& a : h.annotations) {
    std::size_t at = h.points.size();
    for (std::size_t i = 0; i < h.points.size(); ++i)
      if (a.run_id.empty() ? h.points[i].started_ns >= a.created_ns
                           : h.points[i].run_id == a.run_id) {
        at = i;
        break;
      }
    if (at == h.points.size()) continue;
    const double x = plot.px(at), y = plot.py(r.lo - r.pad);
    plot.add(
        fmt::format("<path class=\"annotation\" d=\"M{:.1f},{:.1f} l-6,10 h12 z\" fill=\"#8250df\">"
                    "<title>{}: {} ({})</title></path>",
                    x, y - 12, store::to_string(a.kind), esc(a.reason), esc(a.author)));
  }
}

// The x axis of a history: at most eight runs ticked, evenly spread, each with its date over its
// commit.
std::vector<std::pair<double, std::string>> history_ticks(
    const std::vector<store::HistoryPoint>& p) {
  std::vector<std::pair<double, std::string>> t;
  const std::size_t step = std::max<std::size_t>(1, (p.size() + 7) / 8);
  for (std::size_t i = 0; i < p.size(); i += step) {
    const std::string day = date(p[i].started_ns);
    t.emplace_back(static_cast<double>(i),
                   fmt::format("{}\n{}", day.size() > 5 ? day.substr(5) : day,
                               p[i].commit.empty() ? "-" : p[i].commit.substr(0, 7)));
  }
  return t;
}

// The case's runs oldest first, with its change points and annotations. Needs a run.
std::string history_svg(const store::CaseHistory& h) {
  const HistoryRange r = history_range(h);
  const double n = std::max<double>(1, h.points.size() - 1);
  Plot plot({0, n, false, "run: date (UTC) and commit, oldest first"},
            {r.bottom(), r.top(), false, "median"});
  plot.set_x_ticks(history_ticks(h.points));
  plot_history_runs(plot, h.points);
  plot_history_changes(plot, h, r);
  plot_history_annotations(plot, h, r);
  std::vector<Plot::Entry> legend{{"#0969da", "median"}, {"#ddf4ff", "its confidence interval"}};
  if (!h.changes.empty()) legend.push_back({"#cf222e", "change point"});
  if (!h.annotations.empty()) legend.push_back({"#8250df", "annotation"});
  plot.legend(legend);
  return plot.svg(
      "history of " + h.key, [](double v) { return fmt::format("{:g}", v + 1); },
      [](double v) { return util::format_duration(v); });
}

std::string history_changes(const store::CaseHistory& h) {
  std::vector<std::vector<std::string>> changes;
  for (const auto& c : h.changes)
    changes.push_back({fmt::format("{:+.2f}%", 100 * c.point.relative_change),
                       dur(c.point.before_mean), dur(c.point.after_mean),
                       c.commit_before.substr(0, 12) + ".." + c.commit_after.substr(0, 12),
                       date(c.at_ns), fmt::format("{:.2g}", c.point.p_value)});
  return "<h2>Change points</h2>\n" +
         (changes.empty()
              ? std::string("<p class=\"muted\">None found.</p>\n")
              : table({"change", "before", "after", "commits", "first run after", "p"}, changes));
}

std::string history_annotations(const store::CaseHistory& h) {
  std::vector<std::vector<std::string>> notes;
  for (const auto& a : h.annotations)
    notes.push_back({store::to_string(a.kind), a.case_glob, a.run_id.substr(0, 8), a.reason,
                     a.author, date(a.created_ns)});
  return "<h2>Annotations</h2>\n" +
         (notes.empty() ? std::string("<p class=\"muted\">None.</p>\n")
                        : table({"kind", "cases", "run", "reason", "author", "made"}, notes));
}

// What a run of the history says of a busy machine, or "": core/stability.h's rule on the
// figures it stored, with the default measure settings (a scenario's own limits are not stored
// per run).
std::string unstable_note(const store::HistoryPoint& p) {
  return core::unstable_note(p.stability, core::MeasureSettings{});
}

int unstable_runs(const store::CaseHistory& h) {
  return static_cast<int>(std::count_if(h.points.begin(), h.points.end(),
                                        [](const auto& p) { return !unstable_note(p).empty(); }));
}

std::string history_runs(const store::CaseHistory& h) {
  std::vector<std::vector<std::string>> runs;
  std::vector<std::string> classes;
  for (auto it = h.points.rbegin(); it != h.points.rend(); ++it) {
    runs.push_back(
        {date(it->started_ns), it->commit.substr(0, 12), it->branch, dur(it->median_ns),
         it->ci_high_ns > 0 ? fmt::format("[{}, {}]", dur(it->ci_low_ns), dur(it->ci_high_ns)) : "",
         it->run_id.substr(0, 8), unstable_note(*it)});
    classes.push_back(runs.back().back().empty() ? "" : "unstable");
  }
  return "<h2>Runs (newest first)</h2>\n" +
         table({"started", "commit", "branch", "median", "CI", "run", "note"}, runs, classes);
}

}  // namespace

Peaks case_peaks(const core::CaseResult& c) {
  Peaks p;
  p.tflops = c.spec.hardware.peak_tflops.value_or(0);
  p.gbps = c.spec.hardware.peak_gbps.value_or(0);
  auto ratio = [&](const char* achieved, const char* fraction) {
    auto a = c.metrics.find(achieved), f = c.metrics.find(fraction);
    return a != c.metrics.end() && f != c.metrics.end() && f->second > 0 ? a->second / f->second
                                                                         : 0.0;
  };
  const bool scenario = p.tflops > 0 || p.gbps > 0;
  if (p.tflops <= 0)
    p.tflops = ratio("roofline.throughput.tflops", "roofline.throughput.fraction_of_peak");
  if (p.gbps <= 0)
    p.gbps = ratio("roofline.bandwidth.achieved_gbps", "roofline.bandwidth.fraction_of_peak");
  p.source = scenario                                   ? "the scenario's hardware.peak_*"
             : c.metrics.count("roofline.peaks_probed") ? "measured (triad and GEMM probe)"
                                                        : "the device's properties";
  return p;
}

std::string html_run(const core::Run& run) {
  std::string body = run_line(run);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> classes;
  std::vector<const core::CaseResult*> cases;
  for (const auto& c : run.cases) {
    cases.push_back(&c);
    const bool ok = c.status == core::CaseStatus::ok && c.summary.n > 0;
    auto metric = [&](const char* k, const char* f) {
      auto it = c.metrics.find(k);
      return it == c.metrics.end() ? std::string() : fmt::format(fmt::runtime(f), it->second);
    };
    rows.push_back(
        {c.spec.key, core::to_string(c.status), ok ? dur(c.summary.median_ns) : "",
         ok ? fmt::format("[{}, {}]", dur(c.summary.ci_low_ns), dur(c.summary.ci_high_ns)) : "",
         ok ? std::to_string(c.summary.n) : "", metric("throughput.tflops", "{:.3f}"),
         metric("bandwidth.achieved_gbps", "{:.1f}"), c.backend,
         one_line(case_note(c, false), 300)});
    // A busy machine's figures stand out as a failure's do: they are not the kernel's.
    classes.push_back(c.status != core::CaseStatus::ok ? "failed"
                      : core::stability(c).unstable    ? "unstable"
                                                       : "");
  }
  body += "<h2>Results</h2>\n" + table({"case", "status", "median", "CI of the median", "samples",
                                        "TFLOP/s", "GB/s", "backend", "note"},
                                       rows, classes);
  Peaks peaks;
  const auto points = roofline_points(cases, peaks);
  if (!points.empty()) body += "<h2>Roofline</h2>\n" + roofline_svg(points, peaks);
  body += "<h2>Cost matrices</h2>\n";
  for (const auto* c : cases) body += case_section(*c);
  return page("attnprof run " + run.id.substr(0, 8), body);
}

std::string html_gate(const GateReport& r) {
  static const std::map<std::string, int> order{
      {"regression", 0},  {"failed", 1}, {"missing", 2}, {"inconclusive", 3}, {"accepted", 4},
      {"improvement", 5}, {"new", 6},    {"ignored", 7}, {"unchanged", 8}};
  std::vector<const gate::CaseVerdict*> sorted;
  for (const auto& v : r.verdicts) sorted.push_back(&v);
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
    return order.at(gate::to_string(a->verdict)) < order.at(gate::to_string(b->verdict));
  });
  std::string body = "<p><b>" + esc(verdict_counts(r.verdicts)) + "</b></p>\n";
  for (const auto& n : report_notes(r)) body += "<p class=\"note\">" + esc(n) + "</p>\n";
  body += run_line(r.run) + "<p>Against <code>" + esc(r.baseline) + "</code>.</p>\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> classes;
  for (auto* v : sorted) {
    const bool ratio = std::isfinite(v->ratio) && v->ratio > 0;
    const bool ci = std::isfinite(v->ci_low) && std::isfinite(v->ci_high) && v->ci_high > 0;
    rows.push_back(
        {v->key, gate::to_string(v->verdict), dur(v->baseline_median_ns),
         dur(v->candidate_median_ns), ratio ? fmt::format("{:+.2f}%", 100 * (v->ratio - 1)) : "",
         ci ? fmt::format("[{:+.2f}%, {:+.2f}%]", 100 * (v->ci_low - 1), 100 * (v->ci_high - 1))
            : "",
         v->tolerance > 0 ? fmt::format("{:.1f}%", 100 * v->tolerance) : "",
         one_line(v->reason, 400)});
    classes.push_back(gate::to_string(v->verdict));
  }
  body += "<h2>Verdicts</h2>\n" +
          table({"case", "verdict", "baseline", "now", "change", "99% CI", "tol", "reason"}, rows,
                classes);
  if (r.mode == "ab") body += "<p class=\"note\">" + esc(kPairedNote) + "</p>\n";
  body += findings_section(sorted);
  if (r.ab) {
    body += "<h2>A/B: " + esc(r.ab->base_label) + " → " + esc(r.ab->head_label) + "</h2>\n";
    for (auto* v : sorted) {
      auto it = std::find_if(r.ab->cases.begin(), r.ab->cases.end(),
                             [&](const AbCase& a) { return a.key == v->key; });
      if (it == r.ab->cases.end()) continue;
      body += "<h3><code>" + esc(v->key) + "</code> — " + gate::to_string(v->verdict) + "</h3>\n";
      if (!it->rounds.empty()) {
        body += html::ab_rounds_svg(*it, v->tolerance > 0 ? v->tolerance : 0.05);
        body += html::ab_pairs_svg(*it, *v);
      }
      if (!it->ops.empty())
        body += "<p>What moved, per op and kernel:</p>\n" + op_diff_table(it->ops);
      body += html::ab_memory_table(it->memory);
    }
  }
  std::vector<const core::CaseResult*> cases;
  for (const auto& c : r.run.cases) cases.push_back(&c);
  Peaks peaks;
  const auto points = roofline_points(cases, peaks);
  if (!points.empty()) body += "<h2>Roofline</h2>\n" + roofline_svg(points, peaks);
  if (!cases.empty()) {
    body += "<h2>Cost matrices</h2>\n";
    for (const auto* c : cases) body += case_section(*c);
  }
  return page(fmt::format("attnprof gate ({}): {}", r.mode,
                          r.exit_code == 0   ? "passed"
                          : r.exit_code == 1 ? "failed"
                                             : "measure again"),
              body);
}

std::string html_history(const std::vector<store::CaseHistory>& cases, const std::string& glob) {
  const std::string env = cases.empty() ? "" : cases.front().env_fingerprint;
  std::string body;
  if (cases.size() == 1) {
    body = fmt::format("<p>Case <code>{}</code> in environment <code>{}</code>: {} run(s).</p>\n",
                       esc(cases[0].key), esc(env), cases[0].points.size());
  } else {
    body = fmt::format(
        "<p>{} cases match <code>{}</code> in environment <code>{}</code>, each drawn below.</p>\n",
        cases.size(), esc(glob), esc(env));
    std::vector<std::vector<std::string>> rows;
    for (const auto& h : cases)
      rows.push_back({h.key, std::to_string(h.points.size()),
                      h.points.empty() ? "" : dur(h.points.back().median_ns),
                      std::to_string(h.changes.size()), std::to_string(unstable_runs(h))});
    body += table({"case", "runs", "newest median", "change points", "unstable runs"}, rows);
  }
  for (const auto& h : cases) {
    if (cases.size() > 1) body += "<h2 class=\"case\"><code>" + esc(h.key) + "</code></h2>\n";
    if (!h.points.empty()) body += history_svg(h);
    body += history_changes(h) + history_annotations(h) + history_runs(h);
  }
  return page(cases.size() == 1
                  ? "attnprof history: " + cases[0].key
                  : fmt::format("attnprof history: {} ({} cases)", glob, cases.size()),
              body);
}

}  // namespace attnprof::report
