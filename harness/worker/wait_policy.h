// The OpenMP wait policy attnprof's workers run with, one rule for `attnprof run` and `ab`:
// PASSIVE unless the user chose one (OMP_WAIT_POLICY in attnprof's environment, or an
// `--env OMP_WAIT_POLICY=...` for the workers). Threads that spin at an OpenMP barrier while
// their partner is descheduled turn a busy machine into time-slice stalls: the smoke suite's
// 1 ms case measured 72 ms on a loaded 2-core machine; sleeping threads cost a little per
// parallel region, on every run alike. The figures behind the choice: bench/README.md.
#pragma once

#include <string>
#include <vector>

namespace attnprof::worker {

// `env` (NAME=VALUE entries set in a worker's environment before it starts) with
// OMP_WAIT_POLICY=PASSIVE first, unless the user chose a policy; returns whether they did.
bool apply_wait_policy(std::vector<std::string>& env);

// For a command's banner: "" when the user chose, else what the workers run with and how to
// choose.
std::string wait_policy_note(bool chosen);

}  // namespace attnprof::worker
