// attnprof ab's session (session.h): pairs of fresh workers over the cases, until the paired
// statistic's stop rule settles each case or the pairs or the time run out.
#include "harness/ab/session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "harness/core/clock.h"
#include "harness/env/environment.h"
#include "harness/kernel/package.h"
#include "harness/kernel/python.h"
#include "harness/stats/rng.h"
#include "harness/util/machine.h"
#include "harness/worker/client.h"

namespace attnprof::ab {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A worker's spawn with an environment variable of random length (0-4095 bytes): the
// environment sits at the top of the initial stack, so its size moves every stack address of
// the process (Mytkowicz et al., ASPLOS 2009, measured biases of several percent from it).
// Linux randomizes the stack's start too, by up to 8 KiB in 16-byte steps; the padding does
// the same where that randomization is off (setarch -R, some sandboxes). The worker also
// offsets its heap by the padding's length (util::offset_heap), which nothing else does within
// a page.
worker::Spawn padded(worker::Spawn s, stats::Rng& rng) {
  s.args.push_back("--env=ATTNPROF_LAYOUT_PAD=" + std::string(rng.below(4096), 'x'));
  return s;
}

// Whether the user binds the workers' OpenMP threads (OMP_PROC_BIND or OMP_PLACES, in
// attnprof's environment or a worker's): then the pair's CPU order is not given.
bool binds_threads(const worker::Spawn& s) {
  if (std::getenv("OMP_PROC_BIND") || std::getenv("OMP_PLACES")) return true;
  const auto env = worker::env_settings(s.args);
  return std::any_of(env.begin(), env.end(), [](const auto& setting) {
    return setting.first == "OMP_PROC_BIND" || setting.first == "OMP_PLACES";
  });
}

// Both workers of a pair get its CPU order; a CPU case binds intra-op thread i to the i-th
// (worker/runner/thread_placement.h), so the two run thread for thread on the same CPUs.
worker::Spawn with_cpu_order(worker::Spawn s, const std::vector<int>& order) {
  s.args.push_back(fmt::format("--env=ATTNPROF_CPU_ORDER={}", fmt::join(order, ",")));
  return s;
}

bool settled_by(const core::CaseResult& r) {
  return r.status != core::CaseStatus::ok;
}

}  // namespace

bool knows(const worker::Described& d, const core::Case& c) {
  // Every worker runs packages, and Python modules (one built without Python skips them).
  if (kernel::is_package(c.kernel) || kernel::is_python(c.kernel)) return true;
  if (c.kernel.starts_with("op:")) {
    for (const auto& p : d.plugins)
      if (std::find(p.ops.begin(), p.ops.end(), c.kernel.substr(3)) != p.ops.end()) return true;
    return false;
  }
  return std::find(d.kernels.begin(), d.kernels.end(), c.kernel) != d.kernels.end();
}

StoredPair begin_pair(store::Database& db, const core::Run& shared, const std::string& base_commit,
                      Session& session, const core::Case& first) {
  const std::string id = store::new_run_id();
  core::Run head = shared;
  head.started_ns = core::epoch_ns();
  head.pair_id = id;
  head.side = "head";
  head.env = env::fingerprint_for(session.head().described().env, first.hardware.device,
                                  first.hardware.clock_policy);
  core::Run base = head;
  base.side = "base";
  base.git_commit = base_commit;
  base.env = env::fingerprint_for(session.base().described().env, first.hardware.device,
                                  first.hardware.clock_policy);
  head.id = db.begin_run(head);
  base.id = db.begin_run(base);
  StoredPair pair{base, head, Sink{db, id, base.id, head.id}, ""};
  if (base.env.fingerprint() != head.env.fingerprint())
    pair.warning = fmt::format(
        "base and head describe different environments ({} vs {}): their LibTorch or CUDA "
        "versions differ; that difference is part of what is measured",
        base.env.fingerprint().substr(0, 12), head.env.fingerprint().substr(0, 12));
  return pair;
}

void finish_pair(const StoredPair& pair) {
  for (const core::Run* run : {&pair.base, &pair.head})
    pair.sink.db.finish_run(run->id, core::epoch_ns(), run->env);
}

Session::Session(worker::Spawn base, worker::Spawn head, SessionOptions options)
    : m_base_spawn(std::move(base)), m_head_spawn(std::move(head)), m_options(std::move(options)) {
  start_pair(0);
}

Session::~Session() = default;

void Session::start_pair(int pair) {
  stats::Rng rng(m_options.seed + static_cast<std::uint64_t>(pair));
  // Its own stream, so that the padding's draws stay what they were.
  stats::Rng cpu_rng((m_options.seed ^ 0x637075ull) + static_cast<std::uint64_t>(pair));
  m_cpu_order = util::allowed_cpus();
  for (std::size_t i = m_cpu_order.size(); i > 1; --i)
    std::swap(m_cpu_order[i - 1], m_cpu_order[cpu_rng.below(static_cast<std::uint32_t>(i))]);
  m_base.reset();  // the old pair ends before the new one starts
  m_head.reset();
  worker::Spawn base = m_options.randomize_layout ? padded(m_base_spawn, rng) : m_base_spawn;
  worker::Spawn head = m_options.randomize_layout ? padded(m_head_spawn, rng) : m_head_spawn;
  if (m_options.share_cpus && !binds_threads(base) && !binds_threads(head)) {
    base = with_cpu_order(std::move(base), m_cpu_order);
    head = with_cpu_order(std::move(head), m_cpu_order);
  }
  m_base = std::make_unique<worker::Supervisor>(std::move(base));
  m_head = std::make_unique<worker::Supervisor>(std::move(head));
}

// Rounds alternate the two workers, so a CPU that a neighbour keeps busy slows both alike only
// when both run on it: left to the scheduler, one worker of a pair can sit on a busy core and the
// other on a free one for the pair's whole life, a bias of the pair. Measured with 1-thread
// cases beside bursty load on 2 cores, 4 sessions each, alternating (docs/statistics.md): the
// pairs' estimates spread by 1.7-2.0% (sd) with the workers free and 0.4-1.0% on shared CPUs,
// and sessions settled a 5% slowdown in 32-40 s instead of 41-58 s. Each pair draws its CPUs
// afresh, so which CPU it was is a bias of the pair, which the two-level interval allows for.
// A case with as many threads as CPUs (threads: 0, the default, is the physical cores) and a
// GPU case keep every CPU. Within those CPUs each worker of a CPU case binds its intra-op
// thread i to the i-th CPU of the pair's order (with_cpu_order, worker/runner/
// thread_placement.h): under load, 2-thread cases on 2 CPUs found a 5% slowdown at 1% in 34 of
// 36 verdicts bound, 30 of 36 free. A worker restarted within a case keeps its threads' binding but not
// the process's pinning.
void Session::share_cpus(const core::Case& c) {
  if (!m_options.share_cpus) return;
  std::vector<int> cpus = m_cpu_order;
  const int threads = c.hardware.threads;
  if (c.hardware.device == "cpu" && threads > 0 && threads < static_cast<int>(cpus.size()))
    cpus.resize(static_cast<std::size_t>(threads));
  std::sort(cpus.begin(), cpus.end());
  for (worker::Supervisor* w : {m_base.get(), m_head.get()}) util::pin_process(w->pid(), cpus);
}

std::string Session::cpu_placement() const {
  if (!m_options.share_cpus) return "each worker on the CPUs the OS gives it (--no-shared-cpus)";
  if (binds_threads(m_base_spawn) || binds_threads(m_head_spawn))
    return "both workers of a pair on the same CPUs, their threads placed by your OMP_PROC_BIND "
           "or OMP_PLACES";
  return "both workers of a pair on the same CPUs, a CPU case's thread i on the same CPU in "
         "both, drawn per pair (--no-shared-cpus: the OS places them)";
}

std::map<std::string, double> Session::pair_seconds() const {
  std::map<std::string, double> out;
  for (const auto& [key, c] : m_courses)
    if (c.pairs > 0) out[key] = c.seconds / c.pairs;
  return out;
}

// One case on the current pair: its rounds into the sink, its course updated. Returns the
// progress line.
std::string Session::measure(const core::Case& c, int pair, Sink& sink) {
  CaseCourse& course = m_courses[c.key];
  Options o = m_options.rounds;
  o.pass = pair;
  o.first_round = static_cast<int>(m_rounds[c.key].size());
  o.trace = o.trace && pair == 0;  // pair 0's cost matrices stand
  share_cpus(c);
  CaseOutcome out = run_case(*m_base, *m_head, c, o);
  if (pair == 0) {
    sink.db.write_case(sink.base_run, out.base);
    sink.db.write_case(sink.head_run, out.head);
  }
  sink.db.write_rounds(sink.pair_id, out.rounds);
  auto& rounds = m_rounds[c.key];
  rounds.insert(rounds.end(), out.rounds.begin(), out.rounds.end());
  ++course.pairs;
  course.rounds = static_cast<int>(rounds.size());
  course.seconds += out.seconds;
  if (settled_by(out.base) || settled_by(out.head)) {
    const bool head_bad = settled_by(out.head);
    const core::CaseResult& bad = head_bad ? out.head : out.base;
    course.state = pair == 0 ? "not measured on both sides"
                             : fmt::format("pair {} ended it: {} {}", pair + 1,
                                           head_bad ? "head" : "base", core::to_string(bad.status));
    const std::string message = bad.message.substr(0, bad.message.find('\n'));
    return fmt::format("{} {}: {}", head_bad ? "head" : "base", core::to_string(bad.status),
                       message);
  }
  const double tol = gate::tolerance_for(c.gate.tolerance, m_options.gate);
  course.last = gate::check_stop(rounds, tol, m_options.stop);
  if (course.last.decided) course.state = course.last.look ? "settled" : "max pairs";
  const std::string look = course.last.look ? "; " + course.last.reason : "";
  return fmt::format("{} rounds ({}){}", out.rounds.size(), out.stop_reason, look);
}

void Session::run(const std::vector<core::Case>& cases, Sink& sink, const Observer& observer) {
  const auto t0 = Clock::now();
  auto relay = [&] {
    for (auto* s : {m_base.get(), m_head.get()})
      for (const auto& l : s->take_stderr())
        if (observer.message) observer.message(fmt::format("  {}: {}", s->spawn().label, l));
  };
  double last_pair_s = 0;
  for (int pair = 0; pair < std::max(1, m_options.stop.max_pairs); ++pair) {
    std::vector<const core::Case*> todo;
    for (const auto& c : cases)
      if (m_courses[c.key].state.empty()) todo.push_back(&c);
    if (todo.empty()) break;
    // A pair that would end past the time limit is not started.
    if (pair > 0 && m_options.time_limit_s > 0 &&
        since(t0) + last_pair_s > m_options.time_limit_s) {
      for (const auto* c : todo) m_courses[c->key].state = "time limit";
      break;
    }
    const auto p0 = Clock::now();
    if (pair > 0) start_pair(pair);
    m_pairs = pair + 1;
    if (observer.pair_started) observer.pair_started(pair, static_cast<int>(todo.size()));
    double in_cases = 0;  // the cases' own time in this pair; the rest is the workers' start
    for (const core::Case* c : todo) {
      const double before = m_courses[c->key].seconds;
      if (observer.case_started) observer.case_started(c->key);
      std::string line;
      const bool in_base = knows(m_base->described(), *c), in_head = knows(m_head->described(), *c);
      if (!in_base || !in_head) {
        // Only one side has this kernel: run it there alone, for the record.
        worker::Supervisor& only = in_head ? *m_head : *m_base;
        const auto started = Clock::now();
        core::CaseResult r = only.run_case(*c, m_options.rounds.trace,
                                           worker::case_timeout(*c, m_options.rounds.timeout_s));
        sink.db.write_case(in_head ? sink.head_run : sink.base_run, r);
        m_courses[c->key].state = "one side only";
        m_courses[c->key].seconds += since(started);
        line = fmt::format("{} only ({})", in_head ? "head" : "base", core::to_string(r.status));
      } else {
        line = measure(*c, pair, sink);
      }
      in_cases += m_courses[c->key].seconds - before;
      relay();
      if (observer.case_done) observer.case_done(c->key, line);
    }
    last_pair_s = since(p0);
    const double start_share = std::max(0.0, last_pair_s - in_cases) / todo.size();
    for (const core::Case* c : todo) m_courses[c->key].seconds += start_share;
  }
  for (auto& [key, course] : m_courses)
    if (course.state.empty()) course.state = "max pairs";
  m_wall_s = since(t0);
}

}  // namespace attnprof::ab
