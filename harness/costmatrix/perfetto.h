// A traced pass as a Chrome/Perfetto trace (ui.perfetto.dev, chrome://tracing): ops on CPU
// threads and kernels, memcpys and memsets on GPU streams, on one timeline, with a flow arrow
// from each op to the device work it launched.
#pragma once

#include <string>

#include "harness/trace/model.h"

namespace attnprof::costmatrix {

// Chrome trace event JSON ({"traceEvents": [...]}). Times are microseconds from the start of
// the pass; CPU process pid 0, GPU n is pid 1 + n with one track per stream. Notes and the
// dropped-record count go into "otherData".
std::string perfetto_json(const trace::Trace& t);

}  // namespace attnprof::costmatrix
