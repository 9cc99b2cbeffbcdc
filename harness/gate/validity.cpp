// Whether a run's changes look like the machine rather than the code, and marking an
// environmental run's verdicts inconclusive (validity.h).
#include "harness/gate/validity.h"

#include <fmt/format.h>

#include <cmath>

namespace attnprof::gate {

RunValidity assess_run(const std::vector<CaseVerdict>& verdicts, const ValidityOptions& o) {
  RunValidity r;
  for (const auto& v : verdicts) {
    switch (v.verdict) {
      case Verdict::regression:
      case Verdict::improvement:
      case Verdict::unchanged:
      case Verdict::inconclusive:
        break;
      default:
        continue;
    }
    if (!std::isfinite(v.ratio) || v.ratio <= 0) continue;
    ++r.compared;
    if (v.ratio > 1 + v.tolerance) ++r.slower;
    if (v.ratio < 1 - v.tolerance) ++r.faster;
  }
  if (r.compared < o.min_cases) return r;
  const double n = r.compared;
  auto pct = [n](int k) { return 100.0 * k / n; };
  if (r.slower > o.same_direction * n || r.faster > o.same_direction * n) {
    const bool slower = r.slower >= r.faster;
    r.environmental = true;
    r.reason = fmt::format(
        "{} of {} compared cases ({:.0f}%) are {} beyond their tolerance, more than {:.0f}%: "
        "that looks like the machine, not the code",
        slower ? r.slower : r.faster, r.compared, pct(slower ? r.slower : r.faster),
        slower ? "slower" : "faster", 100 * o.same_direction);
  } else if (r.slower > o.both_directions * n && r.faster > o.both_directions * n) {
    r.environmental = true;
    r.reason = fmt::format(
        "slowdowns and speed-ups are both widespread ({} slower, {} faster of {} compared "
        "cases, each more than {:.0f}%): that looks like noise, not the code",
        r.slower, r.faster, r.compared, 100 * o.both_directions);
  }
  return r;
}

int mark_environmental(std::vector<CaseVerdict>& verdicts, const RunValidity& validity) {
  if (!validity.environmental) return 0;
  int changed = 0;
  for (auto& v : verdicts) {
    if (v.verdict != Verdict::regression && v.verdict != Verdict::improvement) continue;
    v.reason = fmt::format("environmental run, so not judged (would be {}: {})",
                           to_string(v.verdict), v.reason);
    v.verdict = Verdict::inconclusive;
    ++changed;
  }
  return changed;
}

}  // namespace attnprof::gate
