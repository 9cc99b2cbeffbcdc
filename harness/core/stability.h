// A busy machine named, not measured: which samples show the worker descheduled, and whether a
// case's samples show it often enough to call the case unstable. The one rule for the results
// table, the reports, the store's readers and the baselines that leave unstable cases out.
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
// barrier use less CPU than wall x threads on a quiet machine too. That rule can still flag a
// quiet machine's passive-waiting case; the run-queue wait cannot.
// A case is unstable when more than its `measure.max_descheduled` (10%) of the samples that
// carry the record are descheduled; the 1-minute load average and the cores the worker may use,
// recorded at the case's end, say how busy the machine was.
#pragma once

#include <string>

#include "harness/core/types.h"

namespace attnprof::core {

// The run-queue wait a descheduled sample must show, as a share of its wall time.
inline constexpr double kDescheduledWait = 0.10;
// Without the wait: the CPU-time shortfall a descheduled sample must show, as a share of
// wall x threads.
inline constexpr double kDescheduledShortfall = 0.10;

bool descheduled(const Sample& s, int threads);

struct Stability {
  int recorded = 0;     // samples that carry a descheduling record (CPU timer)
  int descheduled = 0;  // of them
  double share = 0;     // descheduled / recorded
  double load = -1;     // 1-minute load average at the case's end; < 0: not recorded
  int cores = 0;        // CPUs the worker could run on; 0: not recorded
  bool unstable = false;
  std::string note;  // "unstable: descheduled in 38% of samples; load 4.1 on 2 cores", or ""
};

// The metrics the worker records beside the samples: the machine's load and cores, and the
// share of descheduled samples (what history reads without loading every sample).
inline constexpr const char* kLoadMetric = "machine.load1";
inline constexpr const char* kCoresMetric = "machine.cores";
inline constexpr const char* kDescheduledMetric = "measure.descheduled";

// Whether a share of descheduled samples makes the case unstable.
inline bool unstable_share(double share, const MeasureSettings& m) {
  return share > m.max_descheduled;
}

Stability stability(const CaseResult& r);

}  // namespace attnprof::core
