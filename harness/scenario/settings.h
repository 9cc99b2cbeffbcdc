// The per-case settings blocks a scenario can give at the top level and override per workload:
// hardware:, measure: and gate:. Each is read over the defaults in core/types.h.
#pragma once

#include "harness/core/types.h"
#include "harness/scenario/diags.h"
#include "harness/scenario/tree.h"

namespace attnprof::scenario {

core::Hardware read_hardware(const Node&, Diags&);
core::MeasureSettings read_measure(const Node&, Diags&);
core::GateSettings read_gate(const Node&, Diags&);

}  // namespace attnprof::scenario
