// Case keys: the identity of a case in baselines and history. Built only from what the case is
// (model, phase, shape, dtype, mask, score modifier, level, scale, seed, a GPU's warm L2,
// kernel), never from where or in which order it was written, so reordering or splitting files
// keeps history attached.
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>

#include "harness/core/hash.h"
#include "harness/kernel/score_mod.h"
#include "harness/scenario/scenario.h"

namespace attnprof::scenario {

// The lengths as "l0,l1,...," hashed: the case key's "varlen.<hash>".
static std::uint32_t lengths_hash(const std::vector<int>& lens) {
  std::uint32_t h = core::kFnv32Basis;
  for (int len : lens) h = core::fnv1a32(fmt::format("{},", len), h);
  return h;
}

std::string case_key(const core::Case& c) {
  std::string shape = c.phase == core::Phase::prefill
                          ? fmt::format("b{}-s{}", c.batch, c.q_len)
                          : fmt::format("b{}-q{}-kv{}", c.batch, c.q_len, c.kv_len);
  // Variable lengths by a hash of the lengths themselves: an explicit list and a distribution
  // that draws the same lengths are the same case.
  if (!c.seq_lens.empty()) shape += fmt::format("-varlen.{:08x}", lengths_hash(c.seq_lens));
  shape += fmt::format("-{}", core::to_string(c.dtype));
  switch (c.mask) {
    case core::MaskKind::sliding_window:
      shape += fmt::format("-window{}", c.window);
      break;
    case core::MaskKind::custom:
      shape += fmt::format("-custom.{}", std::filesystem::path(c.mask_file).stem().string());
      break;
    case core::MaskKind::document:  // by a hash of the documents' lengths, as varlen
      shape += fmt::format("-document.{:08x}", lengths_hash(c.documents));
      break;
    case core::MaskKind::prefix:
      shape += fmt::format("-prefix{}", c.prefix);
      break;
    default:
      shape += fmt::format("-{}", core::to_string(c.mask));
      break;
  }
  if (const std::string mod = kernel::score_mod_key(c.score_mod); !mod.empty())
    shape += "-" + mod;
  if (c.level != core::Level::kernel) shape += fmt::format("-{}", core::to_string(c.level));
  if (c.scale) shape += fmt::format("-scale{:g}", *c.scale);
  if (c.seed != 0) shape += fmt::format("-seed{}", c.seed);
  // A GPU's warm L2 is another quantity than its default cold calls; the CPU's is all there is.
  if (c.measure.l2 == "warm" && c.hardware.device != "cpu") shape += "-l2warm";
  return fmt::format("{}/{}/{}/{}", c.model.name, core::to_string(c.phase), shape, c.kernel);
}

}  // namespace attnprof::scenario
