// One case of `attnprof ab` on two workers (driver.h): both prepare, then interleaved rounds
// of one short batch per side in ABBA order, then both finish.
#include "harness/ab/driver.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <tuple>

#include "harness/core/hash.h"
#include "harness/stats/quantile.h"
#include "harness/stats/rng.h"

namespace attnprof::ab {
namespace {

// A batch's median and lower quartile; 0 and 0 for an empty batch.
std::pair<double, double> batch_times(const std::vector<core::Sample>& samples) {
  std::vector<double> ns;
  ns.reserve(samples.size());
  for (const auto& s : samples) ns.push_back(static_cast<double>(s.ns));
  if (ns.empty()) return {0, 0};
  std::sort(ns.begin(), ns.end());
  return {stats::median_sorted(ns), stats::quantile_sorted(ns, 0.25)};
}

// The median SM clock of a batch's samples that read one; 0 where none did.
double batch_clock(const std::vector<core::Sample>& samples) {
  std::vector<double> mhz;
  for (const auto& s : samples)
    if (s.sm_clock_mhz && *s.sm_clock_mhz > 0) mhz.push_back(*s.sm_clock_mhz);
  return mhz.empty() ? 0 : stats::median(mhz);
}

using Clock = std::chrono::steady_clock;

// One case's interleaved rounds on two prepared workers, into out.rounds and out.stop_reason;
// a side whose batch ended the case leaves its final result in base_end or head_end.
void measure_rounds(worker::Supervisor& base, worker::Supervisor& head, const core::Case& c,
                    const Options& o, stats::Rng& rng, CaseOutcome& out,
                    std::optional<core::CaseResult>& base_end,
                    std::optional<core::CaseResult>& head_end) {
  const auto timeout = worker::case_timeout(c, o.timeout_s);
  const double batch_ns = o.batch_ms * 1e6;
  const double budget_ns = c.measure.time_budget_s * o.budget_scale * 1e9;
  const auto start = Clock::now();
  bool head_first = false;
  for (int round = -1; round < o.max_rounds; ++round) {
    // ABBA: a fresh coin for every even round, its reverse for the odd one after it.
    if (round < 0 || round % 2 == 0)
      head_first = rng.below(2) == 1;
    else
      head_first = !head_first;
    worker::Supervisor* order[2] = {&base, &head};
    if (head_first) std::swap(order[0], order[1]);
    worker::Supervisor::Batch got[2];
    bool ended = false;
    for (int i = 0; i < 2 && !ended; ++i) {
      got[i] = order[i]->batch(batch_ns, o.min_calls, 100000, timeout);
      if (got[i].ended) {
        (order[i] == &base ? base_end : head_end) = got[i].ended;
        ended = true;
      }
    }
    if (ended) {
      out.stop_reason =
          base_end ? "base ended: " + base_end->message : "head ended: " + head_end->message;
      return;
    }
    const auto& b = head_first ? got[1] : got[0];
    const auto& h = head_first ? got[0] : got[1];
    if (round >= 0) {
      core::AbRound r;
      r.case_key = c.key;
      r.round = o.first_round + round;
      r.base_first = !head_first;
      std::tie(r.base_ns, r.base_q1_ns) = batch_times(b.samples);
      std::tie(r.head_ns, r.head_q1_ns) = batch_times(h.samples);
      r.base_clock_mhz = batch_clock(b.samples);
      r.head_clock_mhz = batch_clock(h.samples);
      r.base_n = static_cast<int>(b.samples.size());
      r.head_n = static_cast<int>(h.samples.size());
      r.at_ns = got[0].samples.empty() ? 0 : got[0].samples.front().at_ns;
      r.pass = o.pass;
      out.rounds.push_back(r);
      if (o.decided && o.decided(out.rounds, c)) {
        out.stop_reason = "decided";
        return;
      }
    }
    if (std::chrono::duration<double, std::nano>(Clock::now() - start).count() >= budget_ns) {
      out.stop_reason = "time budget";
      return;
    }
  }
  out.stop_reason = "max rounds";
}

}  // namespace

CaseOutcome run_case(worker::Supervisor& base, worker::Supervisor& head, const core::Case& c,
                     const Options& o) {
  CaseOutcome out;
  const auto began = Clock::now();
  const auto timeout = worker::case_timeout(c, o.timeout_s);
  // Each pair of workers its own round order; the first pair's is what it always was.
  stats::Rng rng(o.seed ^ core::fnv1a64(c.key) ^
                 (0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(o.pass)));

  // Prepare in random order too: whichever prepares second starts its rounds warmer.
  std::optional<core::CaseResult> base_end, head_end;
  if (rng.below(2)) {
    head_end = head.prepare(c, timeout);
    base_end = base.prepare(c, timeout);
  } else {
    base_end = base.prepare(c, timeout);
    head_end = head.prepare(c, timeout);
  }
  // One side that cannot be measured leaves the other nothing to be compared with: it is
  // released without the traced pass.
  const bool both = !base_end && !head_end;
  if (both)
    measure_rounds(base, head, c, o, rng, out, base_end, head_end);
  else
    out.stop_reason = "not measured on both sides";
  out.base = base_end ? *base_end : base.finish(both && o.trace, timeout);
  out.head = head_end ? *head_end : head.finish(both && o.trace, timeout);
  out.seconds = std::chrono::duration<double>(Clock::now() - began).count();
  return out;
}

}  // namespace attnprof::ab
