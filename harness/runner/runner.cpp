#include "harness/runner/runner.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <fstream>
#include <regex>

#include "harness/kernel/plugin.h"
#include "harness/kernel/registry.h"
#include "harness/kernel/variants/variants.h"
#include "harness/measure/engine.h"
#include "harness/runner/check.h"
#include "harness/runner/timers.h"
#include "harness/runner/workload.h"
#include "harness/util/error.h"
#ifdef ATTNPROF_HAVE_TRACE
#include "harness/runner/traced_pass.h"
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

void add_roofline_metrics(core::CaseResult& r) {
  if (r.spec.level != core::Level::kernel || r.summary.median_ns <= 0) return;
  const double s = r.summary.median_ns * 1e-9;
  r.metrics["throughput.tflops"] = kernel::attention_flops(r.spec) / s / 1e12;
  r.metrics["bandwidth.achieved_gbps"] = kernel::attention_bytes(r.spec) / s / 1e9;
}

}  // namespace

Runner::Runner(env::Description env, Options options)
    : m_env(std::move(env)), m_options(options), m_default_threads(at::get_num_threads()) {}

core::CaseResult Runner::run(const core::Case& c) {
  if (auto why = hardware_mismatch(c, m_env))
    return with_status(
        c, m_options.require_hardware ? core::CaseStatus::failed : core::CaseStatus::skipped, *why);
  std::string missing;
  const kernel::Variant* v = kernel::lookup(c.kernel, &missing);
  if (!v) return with_status(c, core::CaseStatus::error, missing);
  if (auto why = v->unsupported(c)) return with_status(c, core::CaseStatus::skipped, *why);

  const int threads = m_options.threads > 0 ? m_options.threads : c.hardware.threads;
  // Every case starts from the same thread count: a case that asks for none gets LibTorch's
  // default, not what the previous case set.
  at::set_num_threads(threads > 0 && c.hardware.device == "cpu" ? threads : m_default_threads);

  core::CaseResult r;
  r.spec = c;
  try {
    c10::InferenceMode no_autograd;
    kernel::Inputs in = make_inputs(c);
    r.spec.hardware.threads = at::get_num_threads();

    // Correctness before speed: a fast wrong kernel is a failure, never a number.
    at::Tensor out = v->launch(in);
    CheckResult chk = check_output(out, reference_output(in), c.dtype);
    r.max_abs_error = chk.max_abs_error;
    if (v->chosen_backend) r.backend = v->chosen_backend(in);
    if (!chk.ok) return r.status = core::CaseStatus::failed, r.message = chk.message, r;

    auto work = make_workload(c, *v, in);
    auto timer = make_timer(c, [&work] { work(); });
    measure::Result m = measure::run(*timer, c.measure);
    r.samples = std::move(m.samples);
    r.summary = m.summary;
    r.metrics["measure.warmup_calls"] = m.warmup_calls;
    // How the timer measured (CUPTI or events, graph batches, the blocking kernel) and why it
    // fell back, where it did.
    for (const auto& [k, value] : timer->metrics()) r.metrics[k] = value;
    for (const auto& note : timer->notes()) r.message += (r.message.empty() ? "" : "; ") + note;
    add_roofline_metrics(r);
#ifdef ATTNPROF_HAVE_TRACE
    if (m_options.trace && c.measure.trace)
      traced_pass(c, m_env, work, r, {m_options.perfetto_dir, m_options.hardware_counters});
#endif
  } catch (const kernel::Unsupported& e) {
    return with_status(c, core::CaseStatus::skipped, e.what());
  } catch (const c10::OutOfMemoryError& e) {
    // Out of memory is an outcome of this case, not the end of the run.
    return with_status(c, core::CaseStatus::error,
                       std::string("out of memory: ") + e.what_without_backtrace());
  } catch (const c10::Error& e) {
    return with_status(c, core::CaseStatus::error, e.what_without_backtrace());
  } catch (const util::InputError&) {
    throw;  // bad input (a custom mask file) is the user's to fix: exit 2, not a case error
  } catch (const std::exception& e) {
    // A kernel's own failure (a CUDA error in kernels/cuda, say) ends this case, not the run.
    return with_status(c, core::CaseStatus::error, e.what());
  }
  return r;
}

}  // namespace attnprof::runner
