// One case end to end in the worker (runner.h): the hardware and support checks, inputs and the
// correctness check, then measurement and the traced pass, every failure turned into the case's
// status.
#include "worker/runner/runner.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "harness/core/metric_names.h"
#include "harness/core/stability.h"
#include "harness/kernel/python.h"
#include "harness/measure/engine.h"
#include "harness/util/error.h"
#include "harness/util/machine.h"
#include "worker/kernel/plugin.h"
#include "worker/kernel/registry.h"
#include "worker/kernel/variants/variants.h"
#include "worker/runner/check.h"
#include "worker/runner/memory_watch.h"
#include "worker/runner/thread_placement.h"
#include "worker/runner/timers.h"
#include "worker/runner/workload.h"
#ifdef ATTNPROF_HAVE_TRACE
#include "worker/runner/traced_pass.h"
#endif

namespace attnprof::runner {
namespace {

core::CaseResult with_status(const core::Case& c, core::CaseStatus s, std::string why) {
  core::CaseResult r;
  r.spec = c;
  r.status = s;
  r.message = std::move(why);
  return r;
}

// clock_policy "require-locked": on the CPU, every core's cpufreq governor must be
// "performance"; nullopt when that holds, else why not. GPU clock locks are not verified yet,
// so GPU cases that require them are skipped, saying so.
std::optional<std::string> clocks_not_locked(const core::Case& c) {
  if (c.hardware.clock_policy != "require-locked") return std::nullopt;
  if (c.hardware.device != "cpu")
    return std::string(
        "clock_policy require-locked: attnprof cannot verify locked GPU clocks "
        "yet; use clock_policy record");
  int cores = 0;
  for (int cpu = 0;; ++cpu) {
    std::ifstream in(fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpu));
    std::string governor;
    if (!(in >> governor)) break;
    ++cores;
    if (governor != "performance")
      return fmt::format(
          "clock_policy require-locked: cpu{} uses the \"{}\" cpufreq governor, "
          "not \"performance\"",
          cpu, governor);
  }
  if (cores == 0)
    return std::string(
        "clock_policy require-locked: this machine exposes no cpufreq governor "
        "to check");
  return std::nullopt;
}

// The case's hardware requirement against this machine: nullopt when it matches.
std::optional<std::string> hardware_mismatch(const core::Case& c, const env::Description& env) {
  std::string why;
  if (!env::device_usable(env, c.hardware.device, &why)) return why;
  if (auto clocks = clocks_not_locked(c)) return clocks;
  if (!c.hardware.gpu_pattern.empty() && c.hardware.device != "cpu") {
    const at::Device dev = device_of(c);
    const int index = dev.index() < 0 ? 0 : dev.index();
    const std::string& name = env.devices.at(index).name;
    if (!std::regex_search(name, std::regex(c.hardware.gpu_pattern, std::regex::icase)))
      return fmt::format("GPU \"{}\" does not match \"{}\"", name, c.hardware.gpu_pattern);
  }
  return std::nullopt;
}

// How busy the machine was at the case's end (core/stability.h): the 1-minute load average, the
// CPUs this worker may run on, the share of samples that show the worker descheduled and how
// far they moved the median; on a GPU the share of samples that ran throttled.
void add_machine_metrics(core::CaseResult& r) {
  core::add_stability_metrics(core::stability(r), r.metrics);
  double load[1];
  if (getloadavg(load, 1) == 1) r.metrics[core::kLoadMetric] = load[0];
  r.metrics[core::kCoresMetric] = util::usable_cpus();
}

void add_roofline_metrics(core::CaseResult& r) {
  if (r.spec.level != core::Level::kernel || r.summary.median_ns <= 0) return;
  const double s = r.summary.median_ns * 1e-9;
  // TFLOP/s from useful FLOPs (kernel/flops.h), so that rows compare; a kernel that reports the
  // FLOPs it executes (flex: every pair eagerly, its unskipped blocks compiled) gets that rate too.
  r.metrics["throughput.tflops"] = kernel::attention_flops(r.spec) / s / 1e12;
  if (const auto e = r.metrics.find("flops.executed"); e != r.metrics.end())
    r.metrics["throughput.executed_tflops"] = e->second / s / 1e12;
  r.metrics["bandwidth.achieved_gbps"] = kernel::attention_bytes(r.spec) / s / 1e9;
}

}  // namespace

struct CaseSession::State {
  explicit State(int cuda_device) : memory(cuda_device) {}
  const kernel::Variant* variant = nullptr;
  kernel::Inputs inputs;
  std::function<at::Tensor()> work;
  std::unique_ptr<CaseTimer> timer;
  measure::WarmUp warm;
  bool warmed = false;
  MemoryWatch memory;  // over the measured calls, not the warm-up
};

// Every kernel failure ends the case, not the run: out of memory, c10 errors, a kernel's own
// exception (a CUDA error in kernels/cuda, say). Bad input (a custom mask file) is the user's
// to fix and propagates (exit 2).
template <class F>
bool CaseSession::guarded(F&& f) {
  try {
    c10::InferenceMode no_autograd;
    f();
    return true;
  } catch (const kernel::Unsupported& e) {
    fail(core::CaseStatus::skipped, e.what());
  } catch (const measure::GpuSharedError& e) {
    // --require-idle-gpu: the harness stops the run on this metric (session/run_session.h).
    fail(core::CaseStatus::error, e.what());
    m_result.metrics[core::kOtherProcessesMetric] = e.count();
  } catch (const c10::OutOfMemoryError& e) {
    fail(core::CaseStatus::error, std::string("out of memory: ") + e.what_without_backtrace());
  } catch (const c10::Error& e) {
    fail(core::CaseStatus::error, e.what_without_backtrace());
  } catch (const util::InputError&) {
    throw;
  } catch (const std::exception& e) {
    fail(core::CaseStatus::error, e.what());
  }
  return false;
}

void CaseSession::fail(core::CaseStatus status, std::string why) {
  core::Case spec = m_result.spec;
  m_result = with_status(spec, status, std::move(why));
  m_ready = false;
  m_state.reset();
}

CaseSession::CaseSession(const core::Case& c, const env::Description& env,
                         const Options& options, int default_threads)
    : m_env(env), m_options(options) {
  m_result.spec = c;
  if (auto why = hardware_mismatch(c, m_env)) {
    m_result = with_status(
        c, m_options.require_hardware ? core::CaseStatus::failed : core::CaseStatus::skipped,
        *why);
    return;
  }
  std::string missing;
  const kernel::Variant* v = kernel::lookup(c.kernel, &missing);
  if (!v) {
    m_result = with_status(c, core::CaseStatus::error, missing);
    return;
  }
  if (auto why = kernel::unsupported(*v, c)) {
    m_result = with_status(c, core::CaseStatus::skipped, *why);
    return;
  }

  const int threads = m_options.threads > 0 ? m_options.threads : c.hardware.threads;
  // A scenario may ask for up to 4096 threads (it is checked without the machine); past this
  // machine's bound (util/machine.h) they would only queue for its cores.
  if (c.hardware.device == "cpu" && threads > util::max_threads()) {
    m_result = with_status(
        c, core::CaseStatus::skipped,
        fmt::format("threads {}: more than {} x the {} CPUs this worker may use "
                    "({})",
                    threads, util::kThreadsPerCpu, util::usable_cpus(), util::max_threads()));
    return;
  }
  // Every case starts from the same thread count: a case that asks for none gets LibTorch's
  // default, not what the previous case set.
  at::set_num_threads(threads > 0 && c.hardware.device == "cpu" ? threads : default_threads);

  const bool cuda = c.hardware.device != "cpu";
  // In an `attnprof ab` pair, each intra-op thread on the CPU the pair drew for it, in both
  // workers alike (thread_placement.h); a GPU case's threads are left to the scheduler.
  if (const std::vector<int> order = cuda ? std::vector<int>() : cpu_order_from_env();
      place_intra_op_threads(order) > 0)
    m_batch_cpu = order.front();
  m_state = std::make_unique<State>(cuda ? std::max<int>(0, device_of(c).index()) : -1);
  m_state->variant = v;
  if (m_options.require_idle_gpu && !guarded([&] { refuse_shared_gpu(c); })) return;
  guarded([&] {
    State& st = *m_state;
    // The inputs and the workload keep a pointer to their case: the session's own copy, since
    // `c` may be a temporary (the worker prepares a case for `ab` and returns to its loop).
    const core::Case& c = m_result.spec;
    if (v->prepare) v->prepare(c);  // a compiled package: checked and loaded, not timed
    st.inputs = make_inputs(c);
    m_result.spec.hardware.threads = at::get_num_threads();
    // Correctness before speed: a fast wrong kernel is a failure, never a number. A variant
    // that is the whole block or layer is checked as one, against the harness's own.
    // The reference is the case's choice (check.h); "none" is recorded, and said by every
    // report, never silent.
    const bool whole = kernel::replaces_workload(c, *v);
    if (whole) st.work = make_workload(c, *v, st.inputs);
    at::Tensor out = whole ? st.work() : v->launch(st.inputs);
    const Reference ref = prepare_reference(c);
    CheckResult chk = check_against(ref, c, st.inputs, out, whole);
    m_result.reference = ref.name;
    if (ref.variant) {
      m_result.max_abs_error = chk.max_abs_error;
      m_result.metrics[core::kMeanAbsErrorMetric] = chk.mean_abs_error;
    }
    if (v->chosen_backend) m_result.backend = v->chosen_backend(st.inputs);
    if (!chk.ok) {
      const auto err = m_result.max_abs_error;
      const auto backend = m_result.backend;
      fail(core::CaseStatus::failed, chk.message);
      m_result.max_abs_error = err;
      m_result.metrics[core::kMeanAbsErrorMetric] = chk.mean_abs_error;
      m_result.backend = backend;
      m_result.reference = ref.name;
      return;
    }
    if (!whole) st.work = make_workload(c, *v, st.inputs);
    st.timer = make_timer(
        c, [work = st.work] { work(); },
        TimerOptions{.require_idle_gpu = m_options.require_idle_gpu,
                     .l2_warm = c.measure.l2 == "warm"});
    m_ready = true;
  });
}

CaseSession::~CaseSession() = default;

void CaseSession::warm_up() {
  if (!m_ready || m_state->warmed) return;
  guarded([&] {
    m_state->warm = measure::warm_up(*m_state->timer, m_result.spec.measure);
    m_state->warmed = true;
  });
}

std::vector<core::Sample> CaseSession::batch(double batch_ns, int min_calls, int max_calls) {
  std::vector<core::Sample> out;
  if (!m_ready) return out;
  guarded([&] {
    m_state->memory.begin();
    CallingThreadOn placed(m_batch_cpu);
    out = measure::sample_batch(*m_state->timer, batch_ns, min_calls, max_calls);
    m_state->memory.end(static_cast<int>(out.size()));
  });
  return out;
}

void CaseSession::measure_adaptive() {
  if (!m_ready) return;
  guarded([&] {
    measure::Options options;
    options.sampling_starts = [&] { m_state->memory.begin(); };
    measure::Result m = measure::run(*m_state->timer, m_result.spec.measure, options);
    m_state->memory.end(static_cast<int>(m.samples.size()));
    m_result.samples = std::move(m.samples);
    m_result.summary = m.summary;
    m_state->warm = {m.warmup_calls, m.warmup_ns, m.stationary, m.warmup_rel_diff};
    m_state->warmed = true;
    m_measured = true;
  });
}

core::CaseResult CaseSession::finish(std::vector<core::Sample> samples, bool trace) {
  if (!m_ready) return m_result;
  guarded([&] {
    core::CaseResult& r = m_result;
    if (!m_measured) {
      r.samples = std::move(samples);
      r.summary = measure::summarize(r.samples, r.spec.measure);
    }
    r.metrics["measure.warmup_calls"] = m_state->warm.calls;
    // The timer's CUPTI session ends before the traced pass starts its own (one per process),
    // and what the GPU's driver says after the samples is read before the timer's metrics.
    m_state->timer->finish();
    // How the timer measured (CUPTI or events, graph batches, the blocking kernel) and why it
    // fell back, where it did; on a GPU its clocks, other processes and energy.
    for (const auto& [k, value] : m_state->timer->metrics()) r.metrics[k] = value;
    for (const auto& [k, value] : m_state->memory.metrics()) r.metrics[k] = value;
    if (m_state->variant->metrics)
      for (const auto& [k, value] : m_state->variant->metrics()) r.metrics[k] = value;
    for (const auto& note : m_state->timer->notes())
      r.message += (r.message.empty() ? "" : "; ") + note;
    add_roofline_metrics(r);
    add_machine_metrics(r);
    // A variant that is the whole block or layer is one call: no attention of its own to time
    // apart.
    const bool whole = kernel::replaces_workload(r.spec, *m_state->variant);
#ifdef ATTNPROF_HAVE_TRACE
    if (trace && m_options.trace && r.spec.measure.trace)
      traced_pass(r.spec, m_env, m_state->work, r,
                  {m_options.perfetto_dir, m_options.hardware_counters, !whole});
#else
    (void)trace;
#endif
    if (whole && r.metrics.count("attention.share_from_ops")) {
      r.message += fmt::format("{}attention share: {}'s own attention ops (SDPA, FlexAttention)",
                               r.message.empty() ? "" : "; ",
                               kernel::is_python(r.spec.kernel) ? "the module" : "the package");
    } else if (whole) {
      r.message += std::string(r.message.empty() ? "" : "; ") +
                   "attention share: not separable, " +
                   std::string(kernel::is_python(r.spec.kernel) ? "the module" : "the package") +
                   " computes the whole " +
                   core::to_string(r.spec.level) + " in one call (attention fused with the rest)";
    }
  });
  m_ready = false;
  m_state.reset();
  return m_result;
}

Runner::Runner(env::Description env, Options options)
    : m_env(std::move(env)), m_options(options), m_default_threads(at::get_num_threads()) {}

std::unique_ptr<CaseSession> Runner::prepare(const core::Case& c) {
  return std::make_unique<CaseSession>(c, m_env, m_options, m_default_threads);
}

core::CaseResult Runner::run(const core::Case& c) {
  auto session = prepare(c);
  session->measure_adaptive();
  return session->finish({}, true);
}

}  // namespace attnprof::runner
