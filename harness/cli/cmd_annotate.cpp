// attnprof annotate accept|reset|ignore --case GLOB --reason TEXT: a human decision recorded in
// the history, which `compare` honours (gate/annotations.h, gate/history_baseline.h):
//   accept  the named run's regressions in matching cases are intended (default run: latest)
//   reset   history before this point (the named run, else now) is no baseline for the cases
//   ignore  matching cases are not gated (in the named run only, else in every run)
// `attnprof annotate list` prints the annotations.
#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/store/database.h"
#include "harness/store/render.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

struct AnnotateArgs {
  std::string db, kind, case_glob, reason, author, run, branch, env;
};

// $GITHUB_ACTOR, $USER or $LOGNAME, else the account's name (containers often set no $USER).
std::string default_author() {
  for (const char* var : {"GITHUB_ACTOR", "USER", "LOGNAME"})
    if (const char* v = std::getenv(var); v && *v) return v;
  if (const passwd* pw = getpwuid(geteuid()); pw && pw->pw_name) return pw->pw_name;
  return "";
}

int list(store::Database& db) {
  for (const auto& a : db.annotations())
    fmt::print("#{} {} {:<6} {}{}{}{} by {}: {}\n", a.id, store::format_time(a.created_ns),
               store::to_string(a.kind), a.case_glob, a.run_id.empty() ? "" : " run " + a.run_id,
               a.git_branch.empty() ? "" : " branch " + a.git_branch,
               a.env_fingerprint.empty() ? "" : " env " + a.env_fingerprint, a.author, a.reason);
  return util::exit_pass;
}

int annotate(const AnnotateArgs& o) {
  if (o.kind == "list") {
    auto db = open_history(o.db, store::Database::Mode::read_only);
    return list(db);
  }
  std::vector<util::Diagnostic> bad;
  auto kind = store::parse_annotation_kind(o.kind);
  if (!kind)
    bad.push_back(
        {"annotate", 0, 0, fmt::format("\"{}\" is not accept, reset, ignore or list", o.kind)});
  if (o.case_glob.empty())
    bad.push_back({"--case", 0, 0, "a case glob is required (\"*\" for every case)"});
  if (o.reason.empty()) bad.push_back({"--reason", 0, 0, "a reason is required"});
  const std::string author = o.author.empty() ? default_author() : o.author;
  if (author.empty())
    bad.push_back(
        {"--author", 0, 0, "no author given, and neither $USER nor the account has a name"});
  if (!bad.empty()) throw util::InputError(bad);

  auto db = open_history(o.db);
  store::Annotation a;
  a.kind = *kind;
  a.case_glob = o.case_glob;
  a.reason = o.reason;
  a.author = author;
  a.git_branch = o.branch;
  a.env_fingerprint = o.env;
  // An accept names the run whose regressions it accepts; accepting for every run would be an
  // ignore that nobody meant.
  const std::string run =
      o.run.empty() && a.kind == store::AnnotationKind::accept ? "latest" : o.run;
  if (!run.empty()) {
    auto info = db.find_run(run);
    if (!info)
      throw util::InputError(
          util::Diagnostic{"--run", 0, 0, fmt::format("no run \"{}\" in {}", run, o.db)});
    a.run_id = info->id;
  }
  a.id = db.add_annotation(a);
  fmt::print("annotation #{}: {} \"{}\"{} by {}: {}\n", a.id, store::to_string(a.kind), a.case_glob,
             a.run_id.empty() ? "" : " in run " + a.run_id, a.author, a.reason);
  return util::exit_pass;
}

}  // namespace

Action setup_annotate(CLI::App& sub) {
  auto a = std::make_shared<AnnotateArgs>();
  add_db_option(sub, a->db);
  sub.add_option("kind", a->kind, "accept, reset, ignore, or list")->required();
  sub.add_option("--case", a->case_glob, "Cases it covers: a glob on the case key")
      ->check(glob_check());
  sub.add_option("--reason", a->reason, "Why (required; shown in every verdict it changes)");
  sub.add_option("--author", a->author, "Who decided (default: $GITHUB_ACTOR, else $USER)");
  sub.add_option("--run", a->run,
                 "The run it is about: an id, a unique prefix or latest (accept: default latest)");
  sub.add_option("--branch", a->branch, "Only for runs of this branch");
  sub.add_option("--env", a->env, "Only for this environment fingerprint (a prefix)");
  return [a] { return annotate(*a); };
}

}  // namespace attnprof::cli
