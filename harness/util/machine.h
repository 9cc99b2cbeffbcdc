// What attnprof may use of this machine, for the limits its inputs are checked against: the
// CPUs this process may run on (its affinity mask, which a container or `taskset` narrows), the
// most threads a case may ask for, and the memory it may allocate (the smaller of the memory
// the kernel says is available and this cgroup's limit).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace attnprof::util {

// CPUs in this process's affinity mask; at least 1.
int usable_cpus();

// The CPUs in the affinity mask of process or thread `pid` (0: the calling thread), ascending;
// at least one (CPU 0 when unreadable). usable_cpus() is its size for this process.
std::vector<int> allowed_cpus(pid_t pid = 0);

// Restricts thread `tid` (0: the calling thread) to `cpus`. False when none of them is a CPU
// number or the thread could not be moved.
bool pin_thread(pid_t tid, const std::vector<int>& cpus);

// Restricts every thread of process `pid` (each task in /proc/PID/task) to `cpus`; threads it
// starts later inherit the mask of the thread that starts them. False when a thread could not be
// moved (it ended meanwhile, or the process is not ours); the others are moved all the same.
bool pin_process(pid_t pid, const std::vector<int>& cpus);

// Threads per case at most: 4 x usable_cpus(). More only queue for the cores (100000 threads
// spent a case's whole deadline starting), while a few more than the cores is a fair question
// (how does the kernel behave oversubscribed?).
inline constexpr int kThreadsPerCpu = 4;
int max_threads();

// Bytes this process may still allocate: MemAvailable from /proc/meminfo, capped by the cgroup
// (v2 memory.max less memory.current); nullopt when neither can be read.
std::optional<std::int64_t> available_memory();

// In a child just forked by process `parent`, before exec: the child is killed (SIGKILL) when
// its parent dies, so that nothing attnprof starts (a worker, the packaging python, a bisect
// step) outlives an attnprof killed by a CI timeout; if the parent is already gone, the child
// exits at once with `exit_code`. Only the child itself: what it starts in turn is its own to
// end.
void die_with_parent(pid_t parent, int exit_code);

}  // namespace attnprof::util
