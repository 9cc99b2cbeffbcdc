// Score modifiers (score_mod.h): their names and parameters.
#include "harness/kernel/score_mod.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>

namespace attnprof::kernel {

std::string ScoreMod::name() const {
  switch (kind) {
    case Kind::none: return "none";
    case Kind::alibi: return "alibi";
    case Kind::softcap: return "softcap";
    case Kind::rel_bias: return "rel_bias";
    case Kind::head_bias: return "head_bias";
  }
  return "?";
}

const std::vector<std::string>& score_mod_forms() {
  static const std::vector<std::string> forms = {"none", "alibi", "softcap:CAP", "rel_bias",
                                                 "head_bias"};
  return forms;
}

std::optional<ScoreMod> parse_score_mod(std::string_view text, std::string* why) {
  auto no = [why](std::string s) -> std::optional<ScoreMod> {
    if (why) *why = std::move(s);
    return std::nullopt;
  };
  ScoreMod m;
  if (text.empty() || text == "none") return m;
  if (text == "alibi") m.kind = ScoreMod::Kind::alibi;
  else if (text == "rel_bias") m.kind = ScoreMod::Kind::rel_bias;
  else if (text == "head_bias") m.kind = ScoreMod::Kind::head_bias;
  if (m.kind != ScoreMod::Kind::none) return m;
  if (text == "softcap") return no("softcap needs its cap: softcap:CAP (e.g. softcap:30)");
  if (text.starts_with("softcap:")) {
    const std::string_view v = text.substr(8);
    double cap = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), cap);
    if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(cap))
      return no(fmt::format("softcap's cap \"{}\" is no number (softcap:CAP, e.g. softcap:30)", v));
    if (cap < kMinSoftcap || cap > kMaxSoftcap)
      return no(fmt::format("softcap's cap {:g} is out of range [{:g}, {:g}]", cap, kMinSoftcap,
                            kMaxSoftcap));
    m.kind = ScoreMod::Kind::softcap;
    m.cap = cap;
    return m;
  }
  return no(fmt::format("unknown score modifier \"{}\" (modifiers: {})", text,
                        fmt::join(score_mod_forms(), ", ")));
}

std::string score_mod_key(std::string_view text) {
  const auto m = parse_score_mod(text);
  if (!m || m->kind == ScoreMod::Kind::none) return "";
  if (m->kind == ScoreMod::Kind::softcap) return fmt::format("softcap{:g}", m->cap);
  return m->name();
}

}  // namespace attnprof::kernel
