// attnprof bisect --good REV [--bad REV] [scenarios...]: the first bad commit of a range, every
// step a paired A/B. asv find and git bisect run time each commit on its own; on a noisy
// machine two such timings decide nothing. Here each step builds the commit in a worktree of
// its own (the repository's build command and plugins, as the CI gate builds a side; in
// attnprof's own repository, the tree's attnprof build) and measures it against the good
// commit's build interleaved, as `attnprof ab` does: several pairs of fresh workers, the 99%
// interval of the ratio against the tolerance. A regression is bad, unchanged or faster is good,
// inconclusive stops with the commits that remain (harness/bisect/bisection.h says why).
// Each step's A/B is stored (branch attnprof-bisect); builds are kept for the next step or the
// next bisect (harness/bisect/trees.h).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>

#include "harness/cli/bisect_steps.h"
#include "harness/cli/commands.h"
#include "harness/kernel/names.h"
#include "harness/worker/supervisor.h"

namespace attnprof::cli {
namespace {

// What a build of `c` printed: a line, so that a bisect's log reads as its steps.
bisect::Built build(const bisect::BuildSpec& spec, const bisect::Commit& c, const char* role) {
  fmt::print("bisect: building {} {} ({}) ...\n", role, c.sha.substr(0, 12), c.subject);
  std::fflush(stdout);
  bisect::Built b = bisect::build_commit(spec, c);
  if (b.reused)
    fmt::print("bisect: {} built before, reused ({})\n", c.sha.substr(0, 12), b.tree);
  else
    fmt::print("bisect: {} built in {:.1f} s ({}; log {})\n", c.sha.substr(0, 12), b.seconds,
               b.tree, b.log);
  return b;
}

bisect::BuildSpec build_spec(const BisectArgs& o, const std::string& repo) {
  bisect::BuildSpec spec;
  spec.repo = repo;
  spec.work = o.work.empty() ? bisect::default_work_dir(repo) : o.work;
  spec.build_command = o.build_command;
  std::stringstream in(o.plugins);
  for (std::string p; in >> p;) spec.plugins.push_back(p);
  if (spec.build_command.empty() && !bisect::is_attnprof_repo(repo))
    throw util::InputError(util::Diagnostic{
        "--build-command", 0, 0,
        fmt::format("{} is not attnprof's own repository: name the command that builds its "
                    "code (and --plugins, what it makes)",
                    repo)});
  if (spec.build_command.empty() && !spec.plugins.empty())
    throw util::InputError(
        util::Diagnostic{"--plugins", 0, 0, "plugins need the --build-command that makes them"});
  if (!spec.build_command.empty()) {
    // The LibTorch the worker links, which the build command builds plugins against.
    worker::Supervisor sup(worker::Spawn{worker::default_worker(), {}, "worker"});
    spec.torch_dir = sup.described().torch_dir;
  }
  return spec;
}

// The answer, and the exit code: 0 when a commit is named, 1 when the search stopped without.
int answer(const BisectArgs& o, const bisect::Bisection& b,
           const std::vector<bisect::Commit>& range, const std::vector<Step>& steps,
           double seconds) {
  fmt::print("\nbisect: {} step(s) in {:.1f} s\n{}", steps.size(), seconds, steps_table(steps));
  const Step& last = steps.back();
  const std::string good = b.last_good().substr(0, 12), bad = b.first_bad().substr(0, 12);
  switch (b.state()) {
    case bisect::Bisection::State::found:
      for (const auto& c : range)
        if (c.sha == b.first_bad()) fmt::print("first bad commit: {} {}\n", c.sha, c.subject);
      for (const auto& s : steps)
        if (s.commit.sha == b.first_bad()) fmt::print("  {}\n", step_line(s));
      fmt::print("  its parent {} is good\n", good);
      return 0;
    case bisect::Bisection::State::not_slower:
      fmt::print(
          "bisect: the bad commit {} is not slower than the good one {} ({}): nothing "
          "to bisect\n",
          bad, good, last.judgement.why);
      return 1;
    default: {
      std::string left;
      for (const auto& c : b.remaining()) left += " " + c.substr(0, 12);
      fmt::print(
          "bisect: step {} ({}) is inconclusive: {}\nthe first bad commit is one of these {} "
          "(oldest first):{}\ngo on with a longer budget over them: attnprof bisect --good {} "
          "--bad {} --max-pairs {}, the other options as now\n",
          last.number, last.commit.sha.substr(0, 12), last.judgement.why, b.remaining().size(),
          left, good, bad, 2 * o.ab.max_pairs);
      return 1;
    }
  }
}

int run_bisect(BisectArgs& o) {
  // Bad input costs no build: the session's options, the suite, the range, the cases left.
  gate_options(o.ab);
  load_cases(o.ab.files, kernel::builtin_names(), o.ab.shard, {});
  resolve_range(o);
  load_cases(o.ab.files, kernel::builtin_names(), o.ab.shard, o.ab.case_globs);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string repo = bisect::repo_root(o.repo);
  const std::vector<bisect::Commit> range = bisect::commit_range(repo, o.good, o.bad);
  const bisect::BuildSpec spec = build_spec(o, repo);
  std::vector<std::string> shas;
  for (const auto& c : range) shas.push_back(c.sha);
  bisect::Bisection b(shas);
  fmt::print("bisect: {} commit(s) after good {} up to bad {}; at most {} step(s); builds in {}\n",
             range.size() - 1, range.front().sha.substr(0, 12), range.back().sha.substr(0, 12),
             b.steps_left(), spec.work);
  const bisect::Built good = build(spec, range.front(), "good");
  std::vector<Step> steps;
  while (auto i = b.next()) {
    fmt::print("\n== bisect step {}: {} {} ({} commit(s) left, at most {} step(s) to go)\n",
               steps.size() + 1, range[*i].sha.substr(0, 12), range[*i].subject,
               b.remaining().size(), b.steps_left());
    const bisect::Built head = build(spec, range[*i], *i + 1 == range.size() ? "bad" : "step");
    std::fflush(stdout);
    steps.push_back(run_step(o, good, range.front(), head, range[*i]));
    steps.back().number = static_cast<int>(steps.size());
    fmt::print("bisect: {}\n", step_line(steps.back()));
    b.record(*i, steps.back().judgement.side);
  }
  return answer(o, b, range, steps,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace

Action setup_bisect(CLI::App& sub) {
  auto o = std::make_shared<BisectArgs>();
  add_bisect_options(sub, *o);
  return [o] { return run_bisect(*o); };
}

}  // namespace attnprof::cli
