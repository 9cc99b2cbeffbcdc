// Each of LibTorch's intra-op threads on a CPU of its own, the same one in both workers of an
// `attnprof ab` pair. The driver draws an order of the CPUs for each pair and gives it to both
// workers (ATTNPROF_CPU_ORDER, harness/ab/session.cpp); a CPU case binds its intra-op thread i
// to the i-th CPU of that order while it is prepared, and the calling thread (intra-op thread
// 0) to the first one while a batch is timed.
//
// Why: left to the scheduler, where a worker's threads wake and which of them share a core
// depends on the process's history, and it stays so for the worker's life, a bias of the pair.
// 2-thread cases on 2 CPUs, alternating sessions (docs/statistics.md): on a quiet machine the
// pairs' estimates carried a bias of 4.6% (DerSimonian-Laird tau) with the threads free and 0.6%
// bound (a first look, bound through OMP_PROC_BIND); under load a 5% slowdown was found at 1%
// tolerance in 34 of 36 verdicts bound this way, 30 of 36 free.
//
// Only the calling thread's binding is undone between batches: threads a kernel starts from it
// outside a batch (a plugin's own pool in its first call, say) get the CPUs the case may use,
// not one.
#pragma once

#include <vector>

namespace attnprof::runner {

// ATTNPROF_CPU_ORDER ("1,0" or "3,0,2,1"): the CPUs in that order, kept to those this process
// may use. Empty where it is unset, not a list of CPU numbers, or names none of them.
std::vector<int> cpu_order_from_env();

// Binds intra-op thread i of LibTorch's pool to order[i % order.size()], the calling thread
// (thread 0) only for the call: it leaves with the CPUs it came with. Returns how many threads
// were bound (0 for an empty order).
int place_intra_op_threads(const std::vector<int>& order);

// Every intra-op thread free to run on `cpus` (undoes place_intra_op_threads).
void free_intra_op_threads(const std::vector<int>& cpus);

// The calling thread on one CPU while this lives, on the CPUs it had before after. A cpu below
// 0 does nothing.
class CallingThreadOn {
 public:
  explicit CallingThreadOn(int cpu);
  ~CallingThreadOn();
  CallingThreadOn(const CallingThreadOn&) = delete;
  CallingThreadOn& operator=(const CallingThreadOn&) = delete;

 private:
  std::vector<int> m_before;
};

}  // namespace attnprof::runner
