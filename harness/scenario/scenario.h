// The scenario language: YAML files describing models, workloads and hardware, loaded,
// validated like source code (every error as file:line:col, all at once) and expanded into
// core::Cases (docs/scenarios.md has every key). The rest of attnprof sees only this header.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::scenario {

struct LoadOptions {
  // Registry kernel names, for glob expansion ("sdpa.*") and "unknown kernel" errors with
  // did-you-mean. Empty: kernel names are taken literally and unchecked (globs then an error).
  // Plugin ops ("op:ns::name") are always accepted: they are checked once plugins load.
  std::vector<std::string> kernels;
};

struct Suite {
  std::vector<core::Case> cases;   // in file order, then workload order, then matrix order
  std::vector<std::string> files;  // the files given (not the ones they extend)
  // (case, exclude entry) pairs tested while expanding: exclude: stays near-linear in the size
  // of the matrix and the number of entries, and tests hold it to that through this count.
  std::size_t exclude_checks = 0;
};

// Loads, validates and expands; throws util::InputError carrying ALL diagnostics
// (file:line:col: message). Case keys must be unique across all the files.
Suite load(const std::vector<std::string>& paths, const LoadOptions& = {});
// The same for text in memory; file_name is used in messages and to resolve relative paths
// (extends:, mask_file:).
Suite load_text(std::string_view yaml, std::string_view file_name, const LoadOptions& = {});

// The cases CI shard `index` of `count` runs (1-based index, as in --shard 2/4): a stable split
// (it depends only on the set of case keys and their costs, not their order) that balances
// expected cost. Cases keep their order. Throws util::InputError on a bad index or count.
std::vector<core::Case> shard(const std::vector<core::Case>& cases, int index, int count);
// "2/4" -> {2, 4}; throws util::InputError (file "--shard") when malformed or out of range.
std::pair<int, int> parse_shard(std::string_view);

// Rough expected wall time of measuring a case, in seconds: warm-up plus min_samples calls
// estimated from the attention (and projection/MLP, by level) FLOPs at a nominal rate for the
// device and dtype, capped by the case's time budget. Relative, for balancing shards.
double expected_cost(const core::Case&);
// FLOPs of one call of the case at its level (attention alone, block or whole layer).
double case_flops(const core::Case&);
// Bytes a case needs at least, estimated from its shape: inputs and output in its dtype, the
// correctness check's fp32 reference with its score and probability matrices (which the math
// and eager paths hold too), the mask, and at block or layer level the weights and a few
// activations. A floor, not a bound: allocators and temporaries add to it. `validate` prints
// the largest; `run` skips a case whose estimate exceeds the memory available (with both).
double case_memory_bytes(const core::Case&);

// A custom additive mask (mask: custom, mask_file:): `rows` lines of `cols` whitespace-separated
// floats, "-inf" allowed, added to the scores of every batch and head; row i is query i.
struct MaskFile {
  int rows = 0, cols = 0;
  std::vector<float> values;  // row-major
  // Not empty when the file is larger than the shape it was read for can be written in ("is
  // 64.0 MiB (...), more than 128 x 128 values take (0.5 MiB at most)"): nothing was read.
  std::string beyond;
};
// Characters a value may take, its separator included: a float written in full
// ("-3.40282347e+38 ") fits. The file's size is bounded by it before anything is read.
inline constexpr std::size_t kMaskValueChars = 32;
// Reads and checks a mask file for a case of `rows` x `cols` (q_len x kv_len): every row as
// long as the first, every value finite or -inf. What it reads is bounded by that shape: a
// file larger than rows x cols values can be written in is not read (MaskFile::beyond says
// so), and a token longer than a value is an error that quotes its start, not the token. Throws
// util::InputError naming path:line:col of each problem. load() calls it for every case with mask
// custom and checks rows x cols against q_len x kv_len; the worker reads the mask it runs with
// through it too.
MaskFile read_mask_file(const std::string& path, int rows, int cols);

// The built-in smoke suite (scenarios/smoke.yaml, embedded at build time), so `attnprof run`
// with no file works from any directory. Load it with load_text(text, smoke_suite_name()).
std::string_view embedded_smoke_suite();
inline constexpr std::string_view smoke_suite_name() {
  return "<builtin>/smoke.yaml";
}

// The model presets (scenarios/models.yaml, embedded at build time), in file order.
const std::vector<core::Geometry>& model_presets();
const core::Geometry* find_model(std::string_view name);

// The stable key of a case (its identity in baselines and history), e.g.
// "bert-base/prefill/b1-s128-fp32-none/sdpa.math" or
// "llama-2-7b/decode/b16-q1-kv4096-bf16-none/sdpa.flash".
std::string case_key(const core::Case&);

}  // namespace attnprof::scenario
