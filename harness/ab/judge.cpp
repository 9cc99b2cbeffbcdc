// A stored A/B judged (judge.h): the paired verdicts, the rounds and per-op diffs of the report.
#include "harness/ab/judge.h"

#include <fmt/format.h>

#include "harness/gate/timing_mode.h"
#include "harness/util/error.h"

namespace attnprof::ab {
namespace {

gate::PairedSide side_of(const core::CaseResult& r) {
  return {r.status, r.message, r.status == core::CaseStatus::ok ? gate::timing_mode(r) : "",
          r.reference, gate::traits_of(r)};
}

const core::CaseResult* case_in(const core::Run& run, const std::string& key) {
  const core::CaseResult* found = nullptr;
  for (const auto& r : run.cases)
    if (r.spec.key == key) found = &r;
  return found;
}

// The report's A/B detail: every case's rounds and memory figures, and for every regression and
// improvement which op moved (into `moved` for the console too).
report::AbDetail detail_of(const core::Run& base, const core::Run& head,
                           const std::vector<core::AbRound>& rounds,
                           const std::vector<gate::CaseVerdict>& verdicts, const Judging& j,
                           std::string& moved) {
  report::AbDetail detail;
  detail.base = base;
  detail.base_label = fmt::format(
      "base {}", base.git_commit.empty() ? base.id.substr(0, 8) : base.git_commit.substr(0, 12));
  detail.head_label = fmt::format(
      "head {}", head.git_commit.empty() ? head.id.substr(0, 8) : head.git_commit.substr(0, 12));
  detail.same_build = j.same_build;
  for (const auto& v : verdicts) {
    report::AbCase ac;
    ac.key = v.key;
    for (const auto& r : rounds)
      if (r.case_key == v.key) ac.rounds.push_back(r);
    const core::CaseResult *b = case_in(base, v.key), *h = case_in(head, v.key);
    if (b && h) ac.memory = report::diff_memory(*b, *h);
    if (v.verdict == gate::Verdict::regression || v.verdict == gate::Verdict::improvement) {
      if (b && h) ac.ops = report::diff_cost(b->cost, h->cost);
      if (!ac.ops.empty())
        moved += fmt::format(
            "\nwhat moved in {} ({}, {:.3f}x):\n{}", v.key, gate::to_string(v.verdict), v.ratio,
            report::op_diff_console(ac.ops, static_cast<std::size_t>(j.diff_rows), j.width));
    }
    detail.cases.push_back(std::move(ac));
  }
  return detail;
}

// A stored A/B as the gate's input: one PairedCase per case either run has, with what one more
// pair of workers costs it where the session that measured it says so.
std::vector<gate::PairedCase> paired_cases(const core::Run& base, const core::Run& head,
                                           const std::vector<core::AbRound>& rounds,
                                           const std::map<std::string, double>& pair_seconds) {
  std::vector<gate::PairedCase> out;
  std::map<std::string, std::size_t> at;
  auto add = [&](const core::CaseResult& r, bool is_head) {
    auto [it, fresh] = at.try_emplace(r.spec.key, out.size());
    if (fresh)
      out.push_back(
          {r.spec.key, r.spec.gate.tolerance, r.spec.dtype, std::nullopt, std::nullopt, {}});
    (is_head ? out[it->second].head : out[it->second].base) = side_of(r);
  };
  for (const auto& r : head.cases) add(r, true);
  for (const auto& r : base.cases) add(r, false);
  for (const auto& r : rounds)
    if (auto it = at.find(r.case_key); it != at.end()) out[it->second].rounds.push_back(r);
  for (auto& pc : out)
    if (auto it = pair_seconds.find(pc.key); it != pair_seconds.end()) pc.pair_seconds = it->second;
  return out;
}

}  // namespace

std::optional<Judged> judge_pair(store::Database& db, const std::string& ref, const Judging& j) {
  auto pair = db.find_pair(ref);
  if (!pair) return std::nullopt;
  std::optional<core::Run> base = db.load_run(pair->first.id), head = db.load_run(pair->second.id);
  if (!base || !head)
    throw util::EnvironmentError(fmt::format("{}: A/B pair {} lost a run", db.path(), ref));
  Judged out;
  out.pair_id = head->pair_id;
  out.head_run = head->id;
  report::GateReport& rep = out.report;
  rep.mode = "ab";
  rep.notes = j.notes;
  if (head->status != "complete" || base->status != "complete")
    rep.notes.push_back(fmt::format(
        "A/B pair {} is incomplete (stopped before its end): judging the cases it finished",
        out.pair_id.substr(0, 8)));
  const auto rounds = db.rounds(out.pair_id);
  std::vector<gate::CaseVerdict> verdicts =
      gate::compare_paired(paired_cases(*base, *head, rounds, j.pair_seconds), j.options);
  if (j.annotate) j.annotate(verdicts, *head);
  rep.ab = detail_of(*base, *head, rounds, verdicts, j, out.moved);
  rep.verdicts = verdicts;
  rep.run = *head;
  // The base side's commit, where the caller named it (--base-commit): the report names both.
  rep.baseline =
      fmt::format("A/B pair {} (base run {}{})", out.pair_id.substr(0, 8), base->id.substr(0, 8),
                  base->git_commit.empty() ? "" : " at commit " + base->git_commit.substr(0, 12));
  rep.strict = j.options.strict;
  rep.exit_code = gate::exit_code(verdicts, j.options);
  return out;
}

}  // namespace attnprof::ab
