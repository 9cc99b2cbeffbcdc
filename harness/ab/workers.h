// The two workers of an A/B before they measure: each side's spawn with the environment both
// share (the OpenMP wait policy), whether the two sides are one build (an A/A), and what the
// two sides run between them.
#pragma once

#include <string>
#include <vector>

#include "harness/worker/client.h"
#include "harness/worker/supervisor.h"

namespace attnprof::ab {

struct Sides {
  worker::Spawn base, head;
  bool wait_policy_chosen = false;  // OMP_WAIT_POLICY set by the user
};

// Each side's own arguments, then `env` (NAME=VALUE) for both; OMP_WAIT_POLICY=PASSIVE first,
// unless `env` or attnprof's own environment chooses a policy.
Sides sides(worker::Spawn base, worker::Spawn head, const std::vector<std::string>& env);

// An A/A: one worker executable (build folders and symlinks resolved) with the same arguments
// and plugin files on both sides. The cases, and the AOTInductor packages they name, are the
// same on both sides by construction; a package swapped on one side (--substitute) is an
// argument.
bool same_build(const worker::Spawn& base, const worker::Spawn& head);

// The kernels either side knows (the head's, then the base's it lacks) and the plugins of both:
// what a suite's cases are checked against (a case the base lacks is new, one the head lacks
// missing).
worker::Described both_sides(const worker::Described& base, const worker::Described& head);

}  // namespace attnprof::ab
