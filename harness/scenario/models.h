// Model geometry as data: the presets of scenarios/models.yaml and models defined inline in a
// scenario, read and checked the same way.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/scenario/diags.h"
#include "harness/scenario/tree.h"

namespace attnprof::scenario {

// Reads a `models:` mapping (name -> geometry) into `out`, in file order. An entry may start
// from `base:` (a preset or an earlier entry). Redefining a preset or an earlier model is an
// error: a model name is part of every case key, so it must mean one geometry.
void read_models(const Node& models, const std::vector<core::Geometry>& presets,
                 std::vector<core::Geometry>& out, Diags&);

// Geometry rules shared by presets and inline models, reported at `at`.
void check_geometry(const core::Geometry&, const core::SourceLoc& at, Diags&);

// The head dimensions the kernels support: a multiple of 8 up to 256.
bool supported_head_dim(int);

}  // namespace attnprof::scenario
