// CPUs, thread bound and available memory of this machine (machine.h).
#include "harness/util/machine.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace attnprof::util {

int usable_cpus() {
  return static_cast<int>(allowed_cpus().size());
}

std::vector<int> allowed_cpus(pid_t pid) {
  cpu_set_t set;
  if (sched_getaffinity(pid, sizeof set, &set) != 0) return {0};
  std::vector<int> out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  if (out.empty()) out.push_back(0);
  return out;
}

bool pin_thread(pid_t tid, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  return CPU_COUNT(&set) > 0 && sched_setaffinity(tid, sizeof set, &set) == 0;
}

bool pin_process(pid_t pid, const std::vector<int>& cpus) {
  std::error_code ec;
  std::filesystem::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec);
  if (ec) return false;
  bool all = true;
  for (const auto& task : tasks)
    if (!pin_thread(static_cast<pid_t>(std::stol(task.path().filename().string())), cpus))
      all = false;
  return all;
}

int max_threads() {
  return kThreadsPerCpu * usable_cpus();
}

namespace {

// The first number in `path` (a cgroup file), or nullopt ("max", missing, unreadable).
std::optional<std::int64_t> number_in(const char* path) {
  std::ifstream in(path);
  std::int64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> available_memory() {
  std::optional<std::int64_t> out;
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") {
      out = kib * 1024;
      break;
    }
  const auto limit = number_in("/sys/fs/cgroup/memory.max");
  const auto used = number_in("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const std::int64_t left = std::max<std::int64_t>(0, *limit - *used);
    out = out ? std::min(*out, left) : left;
  }
  return out;
}

void die_with_parent(pid_t parent, int exit_code) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(exit_code);
}

}  // namespace attnprof::util
