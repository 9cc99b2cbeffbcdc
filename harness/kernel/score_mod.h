// Score modifiers, a workload axis (scenario key score_mod): a function of one attention score
// and its coordinates, applied to QK^T*scale before the mask and the softmax, as FlexAttention's
// score_mod is. The four PyTorch's score_mod benchmark and attention-gym run, with q the query's
// position and k the key's (the positions the masks use: prefill query i at i, decode queries
// the last Sq of the keys), h the query head of H:
//   alibi        s + slope_h * (k - q),  slope_h = 2^(-8 (h+1) / H)
//   softcap:CAP  CAP * tanh(s / CAP)
//   rel_bias     s + (q - k)
//   head_bias    s + 2 h
// Torch-free: the loader checks the names, the worker's variants compute them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnprof::kernel {

struct ScoreMod {
  enum class Kind { none, alibi, softcap, rel_bias, head_bias };
  Kind kind = Kind::none;
  double cap = 0;  // softcap's CAP
  // An additive bias (every kind but softcap and none): kernels that take an additive float
  // mask compute it as one (eager, sdpa.*, a py: module given the mask).
  bool additive() const { return kind == Kind::alibi || kind == Kind::rel_bias || kind == Kind::head_bias; }
  std::string name() const;  // the family: "alibi", "softcap", ...
};

// The bounds of softcap's CAP: a cap below 1 flattens every score, one beyond this is no cap.
inline constexpr double kMinSoftcap = 1, kMaxSoftcap = 10000;

// "none" (or ""), "alibi", "softcap:CAP", "rel_bias", "head_bias"; nullopt with why (the list of
// modifiers, or CAP's range) for anything else.
std::optional<ScoreMod> parse_score_mod(std::string_view text, std::string* why = nullptr);

// The forms the scenario language takes, for messages: "none, alibi, softcap:CAP, ...".
const std::vector<std::string>& score_mod_forms();

// The case key's part for a modifier as written ("alibi", "softcap30"); "" for none.
std::string score_mod_key(std::string_view text);

}  // namespace attnprof::kernel
