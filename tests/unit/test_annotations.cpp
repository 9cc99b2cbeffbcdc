// gate::annotations: which runs, branches and environments an annotation applies to, what
// accept, ignore and reset do to verdicts, and Perf-Accept trailers.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "harness/gate/annotations.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {

gate::CaseVerdict verdict(const std::string& key, gate::Verdict v) {
  gate::CaseVerdict c;
  c.key = c.baseline_key = key;
  c.verdict = v;
  c.ratio = 1.2;
  c.reason = "1.200x";
  return c;
}

core::Run judged() {
  core::Run run;
  run.id = "run-b";
  run.git_branch = "pr-7";
  run.env.fields = {{"device.name", "cpu"}};
  for (const char* key : {"bert/prefill/a/eager", "bert/prefill/b/eager", "llama/decode/c/eager"}) {
    core::CaseResult cr;
    cr.spec.key = key;
    run.cases.push_back(cr);
  }
  run.cases[2].spec.aliases = {"llama/decode/c/old-name"};
  return run;
}

store::Annotation note(store::AnnotationKind kind, const std::string& glob,
                       const std::string& run_id, std::int64_t id) {
  store::Annotation a;
  a.id = id;
  a.kind = kind;
  a.case_glob = glob;
  a.run_id = run_id;
  a.author = "alice";
  a.reason = "why " + std::to_string(id);
  return a;
}

}  // namespace

TEST_SUITE("gate::annotations") {
  TEST_CASE("an accept for this run turns its regression into a passing accepted verdict") {
    std::vector<gate::CaseVerdict> v{verdict("bert/prefill/a/eager", gate::Verdict::regression),
                                     verdict("bert/prefill/b/eager", gate::Verdict::regression)};
    CHECK(gate::exit_code(v) == util::exit_gate_failed);
    auto n = gate::apply_annotations(
        v, judged(), {note(store::AnnotationKind::accept, "bert/*/a/*", "run-b", 4)});
    CHECK(n == 1);
    CHECK(v[0].verdict == gate::Verdict::accepted);
    CHECK(v[0].reason == "accepted by alice (#4): why 4; was regression: 1.200x");
    CHECK(v[1].verdict == gate::Verdict::regression);
    CHECK(gate::exit_code(v) == util::exit_gate_failed);
    gate::apply_annotations(v, judged(),
                            {note(store::AnnotationKind::accept, "bert/*", "run-b", 5)});
    CHECK(gate::exit_code(v) == util::exit_pass);
  }
  TEST_CASE("an accept for another run, branch or environment does not apply") {
    std::vector<gate::CaseVerdict> v{verdict("bert/prefill/a/eager", gate::Verdict::regression)};
    auto other_run = note(store::AnnotationKind::accept, "*", "run-a", 1);
    auto other_branch = note(store::AnnotationKind::accept, "*", "", 2);
    other_branch.git_branch = "main";
    auto other_env = note(store::AnnotationKind::accept, "*", "run-b", 3);
    other_env.env_fingerprint = "ffff";
    CHECK(gate::apply_annotations(v, judged(), {other_run, other_branch, other_env}) == 0);
    CHECK(v[0].verdict == gate::Verdict::regression);
    auto same_env = note(store::AnnotationKind::accept, "*", "run-b", 6);
    same_env.env_fingerprint = judged().env.fingerprint().substr(0, 6);  // a prefix
    CHECK(gate::apply_annotations(v, judged(), {same_env}) == 1);
  }
  TEST_CASE("accept does not cover a correctness failure; ignore covers anything and wins") {
    std::vector<gate::CaseVerdict> v{verdict("bert/prefill/a/eager", gate::Verdict::failed),
                                     verdict("llama/decode/c/eager", gate::Verdict::regression)};
    CHECK(gate::apply_annotations(v, judged(),
                                  {note(store::AnnotationKind::accept, "*", "run-b", 1)}) == 1);
    CHECK(v[0].verdict == gate::Verdict::failed);
    v[1] = verdict("llama/decode/c/eager", gate::Verdict::regression);
    // Written under the case's old name, with no run: every run.
    gate::apply_annotations(v, judged(),
                            {note(store::AnnotationKind::accept, "*", "run-b", 1),
                             note(store::AnnotationKind::ignore, "*/old-name", "", 2),
                             note(store::AnnotationKind::ignore, "bert/*", "", 3)});
    CHECK(v[0].verdict == gate::Verdict::ignored);
    CHECK(v[0].reason == "ignored by alice (#3): why 3; was failed: 1.200x");
    CHECK(v[1].verdict == gate::Verdict::ignored);
    CHECK(gate::exit_code(v) == util::exit_pass);
  }
  TEST_CASE("a missing case can be accepted; a reset changes no verdict") {
    std::vector<gate::CaseVerdict> v{verdict("gone/x", gate::Verdict::missing),
                                     verdict("bert/prefill/a/eager", gate::Verdict::regression)};
    CHECK(gate::apply_annotations(v, judged(), {note(store::AnnotationKind::reset, "*", "", 1)}) ==
          0);
    gate::apply_annotations(v, judged(), {note(store::AnnotationKind::accept, "gone/*", "", 2)});
    CHECK(v[0].verdict == gate::Verdict::accepted);
    CHECK(v[1].verdict == gate::Verdict::regression);
  }
  TEST_CASE("Perf-Accept trailers become accept annotations for the run") {
    auto a = gate::parse_accept_trailers(
        "Tile the decode kernel by 64\n\nLonger text.\n\nSigned-off-by: A <a@x>\n"
        "Perf-Accept: llama/decode/* slower at batch 1, faster at 64\n"
        "perf-accept:  bert/*   intended  \n",
        "run-b", "A <a@x>");
    REQUIRE(a.size() == 2);
    CHECK(a[0].kind == store::AnnotationKind::accept);
    CHECK(a[0].case_glob == "llama/decode/*");
    CHECK(a[0].reason == "slower at batch 1, faster at 64");
    CHECK(a[0].run_id == "run-b");
    CHECK(a[0].author == "A <a@x>");
    CHECK(a[1].case_glob == "bert/*");
    CHECK(a[1].reason == "intended");
    CHECK(gate::parse_accept_trailers("no trailers here\n", "r", "a").empty());
  }
  TEST_CASE("a Perf-Accept trailer without a reason names its line") {
    try {
      gate::parse_accept_trailers("Subject\n\nPerf-Accept: llama/*\n", "r", "a");
      FAIL("expected an InputError");
    } catch (const util::InputError& e) {
      REQUIRE(e.diagnostics().size() == 1);
      CHECK(e.diagnostics()[0].to_string() ==
            "commit message:3:1: Perf-Accept needs a case glob and a reason: \"Perf-Accept: "
            "<glob> <reason>\"");
    }
  }
  TEST_CASE("a Perf-Accept trailer with an unclosed \"[\" names its line and character") {
    try {
      gate::parse_accept_trailers("Subject\n\nPerf-Accept:  bert/[ab reason\n", "r", "a");
      FAIL("expected an InputError");
    } catch (const util::InputError& e) {
      REQUIRE(e.diagnostics().size() == 1);
      CHECK(e.diagnostics()[0].to_string() ==
            "commit message:3:20: Perf-Accept: \"bert/[ab\" is not a glob: the \"[\" at character "
            "6 opens a set of characters that no \"]\" closes (to match \"[\" itself, write "
            "\"[[]\")");
    }
  }
  TEST_CASE("globs cross slashes, as SQLite GLOB does") {
    CHECK(gate::glob_match("llama*", "llama/decode/b1/sdpa.flash"));
    CHECK(gate::glob_match("*/sdpa.?lash", "llama/decode/b1/sdpa.flash"));
    CHECK_FALSE(gate::glob_match("bert/*", "llama/bert/x"));
  }
}
