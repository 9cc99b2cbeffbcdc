// The records that flow between attnprof's stages (docs/ARCHITECTURE.md, "Data flow").
// Plain data, no LibTorch: scenario produces Cases, runner produces CaseResults, store and
// gate consume them. Every stage may include this header; it includes nothing of theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnprof::core {

enum class Phase { prefill, decode };
enum class DType { fp32, fp16, bf16 };
enum class MaskKind { none, causal, padding, sliding_window, custom, document, prefix };
enum class Level { kernel, block, layer };

// Attention geometry of a model (scenarios/models.yaml or inline in a scenario).
struct Geometry {
  std::string name;
  int heads = 0;
  int kv_heads = 0;  // == heads for MHA, fewer for GQA/MQA
  int head_dim = 0;
  int hidden = 0;
  int max_positions = 0;
  int sliding_window = 0;  // 0: none
  int mlp_hidden = 0;
  std::string norm = "layernorm";  // layernorm | rmsnorm
};

struct Hardware {
  std::string device = "cpu";           // cpu | cuda | cuda:N
  std::string gpu_pattern;              // regex the GPU name must match; empty: any
  int threads = 0;                      // CPU intra-op threads; 0: physical cores
  std::string clock_policy = "record";  // record | require-locked
  std::optional<double> peak_gbps;      // roofline overrides
  std::optional<double> peak_tflops;
};

struct MeasureSettings {
  double warmup_ms = 200;
  int min_samples = 10;
  int max_samples = 2000;
  double target_rel_ci = 0.005;   // stop when the median's CI half-width / median is below this
  double time_budget_s = 10;      // per case
  bool trace = true;              // run the traced pass and build the cost matrix
  int trace_calls = 10;           // warm calls the traced pass records; the matrix is per call
  double max_descheduled = 0.50;  // more samples descheduled than this share: unstable
  // Unstable, too, when the descheduled samples moved the median by more than this many
  // half-widths of its interval (core/stability.h): 1, out of it.
  double max_descheduled_shift = 1.0;
  double max_throttled = 0.10;  // more GPU samples throttled than this share: unstable
  // The L2 before each sample: "cold" (flushed: a GPU's single calls by default) or "warm" (not
  // flushed: the CPU's only state); "": the device's default. A GPU case's key says warm.
  std::string l2;
};

struct GateSettings {
  double tolerance = 0.05;  // relative slowdown that counts as a regression
};

// Where something came from in a scenario file, for messages that name the spot.
struct SourceLoc {
  std::string file;
  int line = 0;  // 1-based; 0: unknown
  int col = 0;
};

// One measurable unit: a kernel on a concrete workload shape. Its key is stable across runs
// and file reorderings; baselines and history are keyed by it.
struct Case {
  std::string key;                   // e.g. "bert-base/prefill/b1-s128-fp32-none/sdpa.math"
  std::vector<std::string> aliases;  // earlier keys of the same case
  std::string suite;
  std::string workload;
  std::string kernel;
  Geometry model;
  Phase phase = Phase::prefill;
  Level level = Level::kernel;
  int batch = 1;
  int q_len = 0;              // query length: seq_len for prefill, 1 (or a few) for decode
  int kv_len = 0;             // key/value length
  std::vector<int> seq_lens;  // per-sequence lengths when variable; empty: all equal
  DType dtype = DType::fp32;
  MaskKind mask = MaskKind::none;
  int window = 0;               // sliding window size, for MaskKind::sliding_window
  std::string mask_file;        // MaskKind::custom: additive float mask file, absolute path
  // MaskKind::document: the lengths of the documents packed into every sequence (the scenario's
  // seq_lens under mask document; they sum to kv_len): a query sees the keys of its own document.
  std::vector<int> documents;
  int prefix = 0;  // MaskKind::prefix: the first `prefix` keys are seen by every query (prefix-LM)
  // A score modifier applied to QK^T*scale before the mask and softmax (docs/scenarios.md): ""
  // (none), "alibi", "softcap:CAP", "rel_bias" or "head_bias" (score_mod.h).
  std::string score_mod;
  std::optional<double> scale;  // softmax scale; default 1/sqrt(head_dim)
  std::uint64_t seed = 0;       // input data seed
  // What the output is checked against before timing: empty for sdpa.math (the default),
  // "none" (not checked), or another kernel's name (a package, an op), run in fp32 where it
  // can be. Not part of the key: it says how the case is checked, not what it computes.
  std::string reference;
  // A Python kernel's constructor (or factory) arguments, a JSON object as text; empty: none.
  // Not part of the key, like reference: the scenario says it beside the kernel's name.
  std::string kernel_args;
  std::string reference_args;  // likewise for a py: reference (kernel_args' entry for its name)
  // A torch.compile variant starts from a fresh Inductor cache (false), or from the one the
  // worker's environment names (true: scenario "compile_cache: warm").
  bool compile_cache_warm = false;
  Hardware hardware;
  MeasureSettings measure;
  GateSettings gate;
  SourceLoc loc;
};

enum class CaseStatus { ok, failed, skipped, error };

struct Sample {
  std::int64_t ns = 0;     // duration of one call
  std::int64_t at_ns = 0;  // when it was taken (epoch ns)
  std::optional<double> sm_clock_mhz;
  bool dropped = false;  // e.g. taken while throttled; kept for the record
  // What the worker saw of being descheduled during the call (stability.h): the process's CPU
  // time over it, its threads' involuntary context switches (getrusage), and the time its
  // threads spent runnable but waiting for a CPU (the scheduler's run_delay, summed over the
  // threads; absent where the kernel keeps no schedstat). Recorded by the CPU timer; absent
  // from GPU samples and from samples stored before they were recorded.
  std::optional<std::int64_t> cpu_ns;
  std::optional<std::int64_t> invol_switches;
  std::optional<std::int64_t> wait_ns;
};

// The durations every statistic uses: the samples not dropped, in order. The one rule for the
// measurement engine, the gate and the baseline files alike.
std::vector<double> kept_ns(const std::vector<Sample>& samples);

// Robust summary of kept samples.
struct Summary {
  int n = 0;
  double median_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0, q1_ns = 0, q3_ns = 0;
  double ci_low_ns = 0, ci_high_ns = 0;  // confidence interval of the median
  double ci_level = 0.95;
  bool converged = false;  // the CI target was met before the budget ran out
};

// One row of the per-op cost matrix.
// One cost-matrix row. Times, counts and bytes are per call of the case's workload: the traced
// pass records several warm calls and divides.
struct CostRow {
  std::string op;
  std::string input_shapes;  // "[[1,12,128,64], [1,12,128,64]]"
  std::string parent;        // enclosing op, empty at top level
  int calls = 0;
  double cpu_self_ns = 0, cpu_total_ns = 0;
  double device_self_ns = 0, device_total_ns = 0;
  double share = 0;  // of the case's total (device where there is one, else CPU)
  std::int64_t bytes_allocated = 0;
  std::vector<std::pair<std::string, int>> kernels;  // kernel name, launches
  // Filled by harness/costmatrix:
  std::string input_dtypes;  // "[float, float]"
  std::int64_t bytes_freed = 0;
  int launches = 0;               // kernels this op launched itself (per call of the case)
  int copies = 0;                 // memcpys and memsets this op started itself
  std::vector<double> kernel_ns;  // device time of each entry of `kernels`, same order
};

struct CaseResult {
  Case spec;
  CaseStatus status = CaseStatus::ok;
  std::string message;  // why it failed or was skipped
  std::string backend;  // e.g. the backend sdpa.auto chose
  // What the case ran, from its traced pass: on a GPU the kernels it launched (CUPTI's names), on
  // the CPU the ATen ops it called; each once, outermost first (costmatrix::kernel_set), a set
  // to every comparison. nullopt: not recorded (no traced pass, no device trace on a GPU, a case
  // stored before schema v10).
  std::optional<std::vector<std::string>> kernels;
  std::optional<double> max_abs_error;  // the check's; the mean is accuracy.mean_abs_error
  // What the output was checked against: "sdpa.math", another kernel's name, or "none" (not
  // checked: core::kNotChecked says so in every report); empty when the case ended before its
  // check (skipped, an error).
  std::string reference;
  std::vector<Sample> samples;
  Summary summary;
  std::map<std::string, double> metrics;  // named: "throughput.tflops", "bandwidth.achieved_gbps"
  std::vector<CostRow> cost;
};

// What every report says of a case whose output was not checked (its reference is "none"): its
// figures are a kernel's whose correctness nobody looked at.
inline constexpr const char* kNotChecked = "not checked (reference: none)";
inline bool not_checked(const CaseResult& r) {
  return r.reference == "none";
}

// What the machine is. Only stable fields go into the fingerprint; measured clocks are samples.
struct Environment {
  std::map<std::string, std::string> fields;  // "device.name", "torch.version", "cpu.model", ...
  std::string fingerprint() const;            // stable hash of fields
};

struct Run {
  std::string id;  // unique, e.g. a UUID
  std::string git_commit, git_branch, pr, ci_url;
  std::int64_t started_ns = 0, ended_ns = 0;
  std::string status = "complete";  // "incomplete" while cases are still being written
  std::string pair_id, side;        // an A/B's two runs share a pair id; side "base" or "head"
  Environment env;
  std::vector<CaseResult> cases;
};

// One round of an A/B: each side's batch of samples, back to back in the order they ran, and
// the pair of workers that measured it. The driver records it, the store keeps it, the paired
// gate judges from it and the reports draw it.
struct AbRound {
  std::string case_key;
  int round = 0;
  bool base_first = true;
  double base_ns = 0, head_ns = 0;  // each batch's median
  int base_n = 0, head_n = 0;       // samples in each batch
  std::int64_t at_ns = 0;
  int pass = 0;  // the pair of workers (0, 1, ...: attnprof ab starts several)
  // Each batch's lower quartile, what the paired gate judges where every round has it
  // (gate/paired.h): on a busy machine the median of a batch flips between calls that ran alone
  // and calls that shared a CPU, its lower quartile much less. 0: not recorded (rounds stored
  // before schema v11, which are judged on their medians).
  double base_q1_ns = 0, head_q1_ns = 0;
  // The median SM clock of each batch's samples (a GPU side whose timer read its clock): a side
  // that ran its rounds at lower clocks than the other ran on a slower GPU, whatever its code
  // did. 0: not read (the CPU, no NVML, rounds stored before schema v12).
  double base_clock_mhz = 0, head_clock_mhz = 0;
  bool head_first() const { return !base_first; }
};

// The one table of each enum's names, read in both directions: to_string and parse_* below,
// the scenario language's choices (names_of) and the stored JSON all spell them from here.
template <class E>
struct EnumName {
  E value;
  const char* name;
};
inline constexpr EnumName<Phase> kPhaseNames[] = {{Phase::prefill, "prefill"},
                                                  {Phase::decode, "decode"}};
inline constexpr EnumName<DType> kDTypeNames[] = {
    {DType::fp32, "fp32"}, {DType::fp16, "fp16"}, {DType::bf16, "bf16"}};
inline constexpr EnumName<MaskKind> kMaskNames[] = {{MaskKind::none, "none"},
                                                    {MaskKind::causal, "causal"},
                                                    {MaskKind::padding, "padding"},
                                                    {MaskKind::sliding_window, "sliding_window"},
                                                    {MaskKind::custom, "custom"},
                                                    {MaskKind::document, "document"},
                                                    {MaskKind::prefix, "prefix"}};
inline constexpr EnumName<Level> kLevelNames[] = {
    {Level::kernel, "kernel"}, {Level::block, "block"}, {Level::layer, "layer"}};
inline constexpr EnumName<CaseStatus> kCaseStatusNames[] = {{CaseStatus::ok, "ok"},
                                                            {CaseStatus::failed, "failed"},
                                                            {CaseStatus::skipped, "skipped"},
                                                            {CaseStatus::error, "error"}};

template <class E, std::size_t N>
constexpr const char* name_in(const EnumName<E> (&table)[N], E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}
template <class E, std::size_t N>
constexpr std::optional<E> parse_in(const EnumName<E> (&table)[N], std::string_view name) {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}
template <class E, std::size_t N>
std::vector<std::string> names_of(const EnumName<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

inline const char* to_string(Phase v) {
  return name_in(kPhaseNames, v);
}
inline const char* to_string(DType v) {
  return name_in(kDTypeNames, v);
}
inline const char* to_string(MaskKind v) {
  return name_in(kMaskNames, v);
}
inline const char* to_string(Level v) {
  return name_in(kLevelNames, v);
}
inline const char* to_string(CaseStatus v) {
  return name_in(kCaseStatusNames, v);
}
inline std::optional<Phase> parse_phase(std::string_view s) {
  return parse_in(kPhaseNames, s);
}
inline std::optional<DType> parse_dtype(std::string_view s) {
  return parse_in(kDTypeNames, s);
}
inline std::optional<MaskKind> parse_mask(std::string_view s) {
  return parse_in(kMaskNames, s);
}
inline std::optional<Level> parse_level(std::string_view s) {
  return parse_in(kLevelNames, s);
}
inline std::optional<CaseStatus> parse_case_status(std::string_view s) {
  return parse_in(kCaseStatusNames, s);
}
int bytes_per_element(DType);

}  // namespace attnprof::core
