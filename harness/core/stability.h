// A busy machine named, not measured: which samples show the worker descheduled, whether they
// could have moved the case's figure, and on a GPU which samples ran throttled and whether
// another process shared the device. The one rule for the results table, the reports, the
// store's readers and the baselines that leave unstable cases out.
//
// A sample is descheduled when, during its call, the worker's threads spent more than a tenth of
// the call's wall time runnable but waiting for a CPU: the scheduler's run_delay, summed over
// the process's threads (/proc/self/task/*/schedstat). That is the time another task held a
// CPU one of the case's threads wanted, and nothing else: a thread asleep at an OpenMP barrier
// (OMP_WAIT_POLICY=PASSIVE) or idle in a serial stretch is not runnable, so a quiet machine shows
// next to none, while a CPU hog beside a 2-thread case on 2 cores shows tens of percent.
// Where the kernel keeps no schedstat (no CONFIG_SCHED_INFO, some sandboxes), the coarser rule
// of samples recorded before schema v9: the threads were switched out involuntarily
// (getrusage's ru_nivcsw) and the process's CPU time fell short of wall time x the case's
// threads by more than a tenth. Both, because each alone misleads: a kernel thread that takes
// the CPU for 20 us in a 1 ms call is a switch that costs nothing, and threads asleep at a
// barrier use less CPU than wall x threads on a quiet machine too.
//
// A CPU case is unstable when its descheduled samples could have moved its figure, the median of
// its kept samples: the median of the samples that were not descheduled lies outside the
// median's confidence interval (its shift, below, exceeds `measure.max_descheduled_shift`, 1),
// or more than `measure.max_descheduled` (half) of the samples were descheduled, too many for
// the rest to say what a quiet machine measures. A share alone cried wolf: a quiet machine
// descheduled a tenth of some cases' samples (a kernel thread, a file reader) without moving a
// median that is robust to a few slow calls; a median whose interval is narrower than what the
// slow calls moved is not the kernel's figure, whatever their share. docs/statistics.md, "Busy
// machines", has the calibration. Runs stored before the shift was recorded carry only the
// share and are judged by the share rule they were stored under (more than a tenth).
//
// A GPU sample is throttled when its SM clock (read after the call, harness/measure/
// device_timer.h) is below kThrottledClock of the clock the case expected (the applications
// clock, else the device's maximum: gpu.clock.expected_mhz); a GPU case is unstable when more
// than `measure.max_throttled` (10%) of its samples were, named with the clock they ran at and
// the driver's reasons, or when another process had a context on its GPU before or after it
// was measured (gpu.other_processes; the case's message says who).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "harness/core/types.h"

namespace attnprof::core {

// The run-queue wait a descheduled sample must show, as a share of its wall time.
inline constexpr double kDescheduledWait = 0.10;
// Without the wait: the CPU-time shortfall a descheduled sample must show, as a share of
// wall x threads.
inline constexpr double kDescheduledShortfall = 0.10;
// Runs stored without the shift: unstable above this share of descheduled samples.
inline constexpr double kLegacyDescheduledShare = 0.10;
// The largest shift stored: a median interval of zero width (every kept sample equal at the
// middle) that the undisturbed median leaves has no finite shift; this one is far past 1.
inline constexpr double kMaxShift = 1e6;
// A GPU sample below this share of the expected SM clock ran throttled: nvbench's line (75% of
// the default clock), low enough that boost clocks falling under a heavy kernel's own power draw
// are not throttling, high enough for a power-capped or overheated GPU.
inline constexpr double kThrottledClock = 0.75;

bool descheduled(const Sample& s, int threads);
// Whether a GPU sample ran throttled against the case's expected SM clock (0: not known).
bool throttled(const Sample& s, double expected_mhz);

// The figures the rule reads, as the worker stores them beside the samples (what history reads
// without loading every sample).
struct StabilityFigures {
  double descheduled = -1;  // share of the samples descheduled; < 0: not recorded (a GPU case)
  // How far the median of the samples not descheduled lies from the case's median, in
  // half-widths of the median's interval on that side: above 1, outside it. Positive when the
  // descheduled samples made the median slower. nullopt: not known (no interval, every sample
  // descheduled, a run stored before it was recorded).
  std::optional<double> shift;
  double throttled = -1;    // share of the samples throttled; < 0: not recorded (a CPU case)
  int other_processes = 0;  // other processes on the case's GPU, before or after it
};

struct Stability {
  StabilityFigures figures;
  int recorded = 0;                  // samples that carry a descheduling record (CPU timer)
  int descheduled = 0;               // of them
  double share = 0;                  // descheduled / recorded
  double undisturbed_median_ns = 0;  // the median without them; 0: not known
  int clocked = 0;                   // GPU samples that carry their SM clock
  int throttled = 0;                 // of them
  double throttled_clock_mhz = 0;    // the median clock of the throttled ones
  double expected_clock_mhz = 0;     // what the case expected; 0: not known
  // The clock a user's setting held the GPU at (the median of the samples' clocks), where the
  // driver named that setting as the only reason the clock was lower (clock_held_by_setting);
  // then it is the clock the samples are judged against. 0: none.
  double held_clock_mhz = 0;
  std::string throttle_reasons;  // the driver's, "power cap, thermal"; "" none recorded
  double load = -1;              // 1-minute load average at the case's end; < 0: not recorded
  int cores = 0;                 // CPUs the worker could run on; 0: not recorded
  bool unstable = false;
  // "unstable: descheduled in 38% of samples, which moved the median by 2.1x its interval;
  // load 4.1 on 2 cores", "unstable: throttled: SM clock 1,410 of 1,980 MHz in 38% of samples;
  // power cap", or ""
  std::string note;
};

// The metrics the worker records beside the samples: the machine's load and cores, the share
// of descheduled samples and their shift; on a GPU the expected clock, the driver's throttle
// reasons (NVML's bit mask), the share of throttled samples and the other processes.
inline constexpr const char* kLoadMetric = "machine.load1";
inline constexpr const char* kCoresMetric = "machine.cores";
inline constexpr const char* kDescheduledMetric = "measure.descheduled";
inline constexpr const char* kDescheduledShiftMetric = "measure.descheduled_shift";
inline constexpr const char* kExpectedClockMetric = "gpu.clock.expected_mhz";
inline constexpr const char* kThrottleReasonsMetric = "gpu.throttle_reasons";
inline constexpr const char* kThrottledMetric = "measure.throttled";
inline constexpr const char* kOtherProcessesMetric = "gpu.other_processes";
inline constexpr const char* kHeldClockMetric = "gpu.clock.held_mhz";  // Stability::held_clock_mhz

// The rule, from the stored figures.
bool unstable(const StabilityFigures& f, const MeasureSettings& m);

// What a table prints of an unstable case, from the same figures: "unstable: descheduled in 38%
// of samples, which moved the median by 2.1x its interval", "unstable: throttled in 38% of
// samples", "unstable: its GPU shared with 1 other process" ("" when stable).
std::string unstable_note(const StabilityFigures& f, const MeasureSettings& m);

// NVML's clock-event reasons (a bit mask) as words, "power cap, thermal"; the idle bit left out.
std::string throttle_reason_names(std::uint64_t mask);

// 1980 -> "1,980": clocks as nvidia-smi's readers know them.
std::string grouped(double mhz);

// Whether the driver's reasons say that only a user's clock setting held the SM clock down
// (nvmlClocksEventReasonApplicationsClocksSetting: `nvidia-smi -lgc` locked clocks, or `-ac`
// applications clocks), with no power, thermal or other slowdown beside it. Samples below the
// expected clock are then a policy the user chose, judged against the clock it held, not throttled.
bool clock_held_by_setting(std::uint64_t mask);

// The figures from the samples where they carry them, else from the stored metrics (a run read
// with its metrics only), and the note with the clocks, the reasons and the load.
Stability stability(const CaseResult& r);

// The figures as the worker stores them (the metrics above), from a Stability.
void add_stability_metrics(const Stability& st, std::map<std::string, double>& metrics);

}  // namespace attnprof::core
