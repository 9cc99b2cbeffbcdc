// attnprof bisect's options, range, steps and table (bisect_steps.h).
#include "harness/cli/bisect_steps.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "harness/cli/command.h"
#include "harness/cli/open_history.h"
#include "harness/kernel/names.h"
#include "harness/kernel/python.h"
#include "harness/report/format.h"
#include "harness/scenario/scenario.h"
#include "harness/store/changes.h"

namespace attnprof::cli {
namespace {

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

void add_bisect_options(CLI::App& sub, BisectArgs& o) {
  sub.add_option("--good", o.good, "The last commit known good (any git revision)");
  sub.add_option("--bad", o.bad, "The commit known bad, a descendant of --good")
      ->capture_default_str();
  sub.add_option("--commits", o.commits,
                 "GOOD..BAD at once, as `attnprof changes` prints a change's commit range");
  sub.add_option("--from-change", o.from_change,
                 "A case key: the newest slowdown `attnprof changes` finds in its history "
                 "(--db) gives the range, and the case is what each step measures");
  sub.add_option("--repo", o.repo, "The git repository to bisect")->capture_default_str();
  sub.add_option("--work", o.work,
                 "Where each commit's worktree and build are kept and reused (default: "
                 "attnprof-bisect in the repository's git folder)");
  sub.add_option("--build-command", o.build_command,
                 "Builds the repository's code in each commit's tree, as the gate's "
                 "build-command (none: attnprof's own repository, each commit's ci/build.sh)")
      ->envname("ATTNPROF_BUILD_COMMAND");
  sub.add_option("--plugins", o.plugins,
                 "Plugin paths, space-separated, relative to each tree, as the gate's plugins: "
                 "each side's worker loads its own tree's")
      ->envname("ATTNPROF_PLUGINS");
  sub.add_option("--worker-args", o.worker_args,
                 "Arguments for both sides' workers, space-separated, as the gate's worker-args")
      ->envname("ATTNPROF_WORKER_ARGS");
  add_ab_session_options(sub, o.ab);
}

void resolve_range(BisectArgs& o) {
  if (!o.commits.empty()) {
    const auto dots = o.commits.find("..");
    if (dots == std::string::npos || !o.good.empty())
      throw util::InputError(util::Diagnostic{
          "--commits", 0, 0,
          o.good.empty() ? fmt::format("\"{}\" is not a range GOOD..BAD", o.commits)
                         : "gives the range; --good gives it too: name one"});
    o.good = o.commits.substr(0, dots);
    o.bad = o.commits.substr(dots + 2);
  }
  if (!o.from_change.empty()) {
    if (!o.good.empty())
      throw util::InputError(util::Diagnostic{
          "--from-change", 0, 0, "gives the range; --good or --commits gives it too: name one"});
    store::Database db = open_history(o.ab.db, store::Database::Mode::read_only);
    store::HistoryFilter f;
    f.case_keys = {o.from_change};
    stats::ChangePointSettings settings;
    settings.min_magnitude = 0.01;  // as `attnprof changes`
    const auto changes = store::find_changes(db, f, settings);
    const auto found = store::newest_bisectable_slowdown(changes);
    const store::CaseChange* newest = found.change;
    if (!newest && found.passed_over > 0)
      throw util::InputError(util::Diagnostic{
          "--from-change", 0, 0,
          fmt::format(
              "the history in {} shows {} slowdown(s) of {}, each between two runs of "
              "one commit (or of none): the machine changed, not the code, and there is nothing to "
              "bisect (attnprof changes --case '{}' lists them)",
              o.ab.db, found.passed_over, o.from_change, o.from_change)});
    if (!newest)
      throw util::InputError(util::Diagnostic{
          "--from-change", 0, 0,
          fmt::format("the history in {} shows no slowdown of {} (attnprof changes --case "
                      "'{}' lists its change points)",
                      o.ab.db, o.from_change, o.from_change)});
    if (found.passed_over > 0)
      fmt::print(
          "bisect: passed over {} newer slowdown(s) of {} between two runs of one commit "
          "or of none (the machine's, not a commit's)\n",
          found.passed_over, o.from_change);
    o.good = newest->commit_before;
    o.bad = newest->commit_after;
    fmt::print("bisect: {} slowed by {:+.1f}% between {} and {} (attnprof changes)\n",
               o.from_change, 100 * newest->point.relative_change, o.good.substr(0, 12),
               o.bad.substr(0, 12));
    if (o.ab.case_globs.empty()) o.ab.case_globs = {o.from_change};
  }
  if (o.good.empty())
    throw util::InputError(util::Diagnostic{
        "--good", 0, 0, "name the good commit (--good, --commits GOOD..BAD or --from-change)"});
}

Step run_step(const BisectArgs& o, const bisect::Built& good, const bisect::Commit& good_commit,
              const bisect::Built& head, const bisect::Commit& commit) {
  AbArgs a = o.ab;
  a.base = good.worker;
  a.head = head.worker;
  a.base_args = a.head_args = words(o.worker_args);
  for (const auto& p : good.plugins) a.base_args.push_back("--plugin=" + p);
  for (const auto& p : head.plugins) a.head_args.push_back("--plugin=" + p);
  // Python modules are read where they lie, not built: each side calls its own commit's copy.
  const auto cases = scenario::load(a.files, {kernel::builtin_names()}).cases;
  const std::string repo = bisect::repo_root(o.repo);
  for (auto& s : kernel::python_substitutes(cases, repo, good.tree)) a.base_args.push_back(s);
  for (auto& s : kernel::python_substitutes(cases, repo, head.tree)) a.head_args.push_back(s);
  a.base_commit = good_commit.sha;
  a.meta.commit = commit.sha;
  a.meta.branch = "attnprof-bisect";
  AbOutcome outcome;
  run_ab(a, &outcome);  // its exit code is the step's verdict, which judge_step reads in full
  Step s;
  s.commit = commit;
  s.judgement = bisect::judge_step(outcome.verdicts);
  s.pair_id = outcome.pair_id;
  s.ab_seconds = outcome.seconds;
  s.build_seconds = head.seconds;
  s.reused = head.reused;
  return s;
}

namespace {
std::string interval(const gate::CaseVerdict& v) {
  if (std::isnan(v.ratio) || v.ratio == 0) return "-";
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", v.ratio, v.ci_low, v.ci_high);
}
}  // namespace

std::string step_line(const Step& s) {
  const auto& v = s.judgement.decisive;
  return fmt::format("step {}: {} ratio {} {} at {:.0f}% -> {} ({})", s.number,
                     s.commit.sha.substr(0, 12), interval(v), gate::to_string(v.verdict),
                     100 * v.tolerance, bisect::to_string(s.judgement.side), s.judgement.why);
}

std::string steps_table(const std::vector<Step>& steps) {
  report::Table t({"step", "commit", "subject", "ratio [99% interval]", "verdict", "side",
                   "A/B pair", "build", "A/B"});
  for (const auto& s : steps)
    t.add({std::to_string(s.number), s.commit.sha.substr(0, 12), s.commit.subject,
           interval(s.judgement.decisive), gate::to_string(s.judgement.decisive.verdict),
           bisect::to_string(s.judgement.side), s.pair_id.substr(0, 8),
           s.reused ? "reused" : fmt::format("{:.1f} s", s.build_seconds),
           fmt::format("{:.1f} s", s.ab_seconds)});
  t.set_detail(2);  // a long subject goes under its row
  return t.render();
}

}  // namespace attnprof::cli
