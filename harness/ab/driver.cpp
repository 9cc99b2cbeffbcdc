#include "harness/ab/driver.h"

#include <chrono>
#include <functional>

#include "harness/stats/quantile.h"
#include "harness/stats/rng.h"

namespace attnprof::ab {
namespace {

double batch_median(const std::vector<core::Sample>& samples) {
  std::vector<double> ns;
  ns.reserve(samples.size());
  for (const auto& s : samples) ns.push_back(static_cast<double>(s.ns));
  return ns.empty() ? 0 : stats::median(ns);
}

std::uint64_t key_hash(const std::string& key) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across toolchains
  for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ull;
  return h;
}

}  // namespace

CaseOutcome run_case(worker::Supervisor& base, worker::Supervisor& head, const core::Case& c,
                     const Options& o) {
  using Clock = std::chrono::steady_clock;
  CaseOutcome out;
  const auto timeout = worker::case_timeout(c, o.timeout_s);
  stats::Rng rng(o.seed ^ key_hash(c.key));

  // Prepare in random order too: whichever prepares second starts its rounds warmer.
  std::optional<core::CaseResult> base_end, head_end;
  if (rng.below(2)) {
    head_end = head.prepare(c, timeout);
    base_end = base.prepare(c, timeout);
  } else {
    base_end = base.prepare(c, timeout);
    head_end = head.prepare(c, timeout);
  }
  if (base_end || head_end) {
    // One side cannot be measured: the other has nothing to be compared with. Release it
    // without the traced pass.
    out.base = base_end ? *base_end : base.finish(false, timeout);
    out.head = head_end ? *head_end : head.finish(false, timeout);
    out.stop_reason = "not measured on both sides";
    return out;
  }

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
      got[i] = order[i]->batch(batch_ns, 100000, timeout);
      if (got[i].ended) {
        (order[i] == &base ? base_end : head_end) = got[i].ended;
        ended = true;
      }
    }
    if (ended) {
      out.stop_reason = base_end ? "base ended: " + base_end->message
                                 : "head ended: " + head_end->message;
      break;
    }
    const auto& b = head_first ? got[1] : got[0];
    const auto& h = head_first ? got[0] : got[1];
    if (round >= 0) {
      store::AbRound r;
      r.case_key = c.key;
      r.round = o.first_round + round;
      r.base_first = !head_first;
      r.base_ns = batch_median(b.samples);
      r.head_ns = batch_median(h.samples);
      r.base_n = static_cast<int>(b.samples.size());
      r.head_n = static_cast<int>(h.samples.size());
      r.at_ns = got[0].samples.empty() ? 0 : got[0].samples.front().at_ns;
      out.rounds.push_back(r);
      if (o.decided && o.decided(out.rounds, c)) {
        out.stop_reason = "decided";
        break;
      }
    }
    if (std::chrono::duration<double, std::nano>(Clock::now() - start).count() >= budget_ns) {
      out.stop_reason = "time budget";
      break;
    }
  }
  if (out.stop_reason.empty()) out.stop_reason = "max rounds";
  out.base = base_end ? *base_end : base.finish(o.trace, timeout);
  out.head = head_end ? *head_end : head.finish(o.trace, timeout);
  return out;
}

}  // namespace attnprof::ab
