// harness/kernel/python: the parts of a "py:PATH.py:NAME[@MODE]" kernel, where its file is, the
// user's frame in a dying worker's stack; and how the scenario loader takes such kernels, their
// kernel_args and compile_cache, and what the run table says of a compile.
#include <doctest/doctest.h>

#include "harness/kernel/python.h"
#include "harness/report/results.h"
#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {

std::string errors(const std::string& yaml) {
  try {
    scenario::load_text(yaml, "t.yaml", {{"sdpa.math", "eager"}});
    return "";
  } catch (const util::InputError& e) {
    return e.what();
  }
}

std::string why_not(const std::string& name) {
  std::string why;
  CHECK_FALSE(kernel::parse_python(name, &why));
  return why;
}

}  // namespace

TEST_SUITE("kernel::python") {
  TEST_CASE("a py: name's file, name and torch.compile mode") {
    auto k = kernel::parse_python("py:attn/my_attn.py:RopeAttention");
    REQUIRE(k);
    CHECK(k->file == "attn/my_attn.py");
    CHECK(k->name == "RopeAttention");
    CHECK(k->mode == "");
    k = kernel::parse_python("py:a.py:f@compile");
    REQUIRE(k);
    CHECK(k->mode == "default");  // @compile is torch.compile's default mode
    CHECK(kernel::parse_python("py:a.py:f@max-autotune")->mode == "max-autotune");
    CHECK(kernel::parse_python("py:a.py:f@reduce-overhead")->mode == "reduce-overhead");
    // A colon or an '@' inside the path belongs to the path.
    CHECK(kernel::parse_python("py:/d@v2/c:d/a.py:f")->file == "/d@v2/c:d/a.py");
    CHECK(kernel::parse_python("py:/d@v2/a.py:f")->mode == "");

    CHECK(why_not("py:a.py:f@fast") ==
          "unknown torch.compile mode \"fast\" (modes: compile, default, lite, reduce-overhead, "
          "max-autotune, max-autotune-no-cudagraphs)");
    CHECK(why_not("py:a.py") ==
          "a Python kernel is py:PATH.py:NAME (NAME: the class, factory or function)");
    CHECK(why_not("py:a.txt:f") == "\"a.txt\" is no Python file (a Python kernel is py:PATH.py:NAME)");
    CHECK(why_not("py:a.py:my-attn") ==
          "\"my-attn\" is no Python name (a Python kernel is py:PATH.py:NAME)");
    CHECK_FALSE(kernel::is_python("aoti:a.pt2"));
  }

  TEST_CASE("a relative file is beside the scenario; the kernel made absolute keeps its mode") {
    CHECK(kernel::python_file("py:m/a.py:f", "/suites/s.yaml") == "/suites/m/a.py");
    CHECK(kernel::python_file("py:../a.py:f@compile", "/suites/x/s.yaml") == "/suites/a.py");
    CHECK(kernel::python_file("py:/abs/a.py:f", "/suites/s.yaml") == "/abs/a.py");
    CHECK(kernel::absolute_python_kernel("py:m/a.py:f@compile", "/suites/s.yaml") ==
          "py:/suites/m/a.py:f@compile");
    CHECK(kernel::absolute_python_kernel("py:m/a.py:f", "/suites/s.yaml") == "py:/suites/m/a.py:f");
  }

  TEST_CASE("another checkout's copy of each module inside the repository, under the case's name") {
    std::vector<core::Case> cases(4);
    cases[0].kernel = "py:attn/m.py:A@compile";
    cases[1].kernel = "py:attn/m.py:A@compile";  // once
    cases[2].kernel = "py:/elsewhere/x.py:f";    // outside the repository: its own file
    cases[3].kernel = "sdpa.math";
    for (auto& c : cases) c.loc.file = "/repo/suites/s.yaml";
    CHECK(kernel::python_substitutes(cases, "/repo", "/work/tree-3") ==
          std::vector<std::string>{
              "--substitute=py:attn/m.py:A@compile=py:/work/tree-3/suites/attn/m.py:A@compile"});
  }

  TEST_CASE("the user's innermost frame in the last stack a dying worker wrote") {
    const std::vector<std::string> segfault = {
        "Fatal Python error: Segmentation fault",
        "",
        "Current thread 0x00007f (most recent call first):",
        "  File \"/usr/lib/python3.11/ctypes/__init__.py\", line 519 in string_at",
        "  File \"/u/modules.py\", line 107 in forward",
        "  File \"/u/modules.py\", line 12 in helper",
        "  File \"/v/torch/nn/modules/module.py\", line 1786 in _call_impl",
        "",
        "Extension modules: numpy, torch._C (total: 2)"};
    CHECK(kernel::python_frame(segfault, "/u/modules.py") == "/u/modules.py:107 (in forward)");
    CHECK_FALSE(kernel::python_frame(segfault, "/u/other.py"));
    // Only the last stack counts: an earlier warning's frames are not where it died.
    const std::vector<std::string> exited = {
        "  File \"/u/modules.py\", line 5 in <module>",
        "attnprof: os._exit(3) called (most recent call first):",
        "  File \"/u/other.py\", line 9 in forward"};
    CHECK_FALSE(kernel::python_frame(exited, "/u/modules.py"));
    CHECK(kernel::python_frame(exited, "/u/other.py") == "/u/other.py:9 (in forward)");
    CHECK_FALSE(kernel::python_frame({}, "/u/modules.py"));
  }
}

TEST_SUITE("scenario::loader") {
  TEST_CASE("py: kernels, their arguments and compile cache, checked at the spot") {
    auto s = scenario::load_text(R"(model: bert-base
kernel_args:
  "py:m.py:Attn*": {causal: true, base: 10000, name: rope, sizes: [1, 2]}
compile_cache: warm
workloads:
  - seq_len: 64
    kernels: [sdpa.math, "py:m.py:Attn", "py:m.py:Attn@max-autotune", "py:m.py:fn"]
    reference: {"py:m.py:fn": "py:m.py:Attn"}
)",
                                 "/s/t.yaml", {{"sdpa.math"}});
    REQUIRE(s.cases.size() == 4);
    CHECK(s.cases[1].key == "bert-base/prefill/b1-s64-fp32-none/py:m.py:Attn");
    CHECK(s.cases[1].kernel_args == R"({"base":10000,"causal":true,"name":"rope","sizes":[1,2]})");
    CHECK(s.cases[2].kernel_args == s.cases[1].kernel_args);
    CHECK(s.cases[3].kernel_args.empty());
    CHECK(s.cases[3].reference == "py:m.py:Attn");
    CHECK(s.cases[3].reference_args == s.cases[1].kernel_args);  // the reference's own
    CHECK(s.cases[2].compile_cache_warm);

    CHECK(errors("model: bert-base\nworkloads: [{seq_len: 64, kernels: ['py:m.py:A@fast']}]\n") ==
          "t.yaml:2:37: kernel \"py:m.py:A@fast\": unknown torch.compile mode \"fast\" (modes: "
          "compile, default, lite, reduce-overhead, max-autotune, max-autotune-no-cudagraphs)");
    CHECK(errors("model: bert-base\nkernel_args: {sdpa.math: {a: 1}}\n"
                 "workloads: [{seq_len: 64, kernels: [sdpa.math]}]\n") ==
          "t.yaml:2:15: kernel_args: kernel \"sdpa.math\" is no Python kernel (only "
          "py:PATH.py:NAME kernels take arguments)");
    CHECK(errors("model: bert-base\nkernel_args: {'py:x.py:B': {a: 1}}\n"
                 "workloads: [{seq_len: 64, kernels: ['py:m.py:A']}]\n") ==
          "t.yaml:2:15: kernel_args: this entry matches no case's kernel");
    CHECK(errors("model: bert-base\nkernel_args: {'py:m.py:A': 3}\n"
                 "workloads: [{seq_len: 64, kernels: ['py:m.py:A']}]\n") ==
          "t.yaml:2:28: kernel_args: \"py:m.py:A\": expected a mapping of NAME: VALUE, got "
          "\"3\"");
    CHECK(errors("model: bert-base\ncompile_cache: hot\nworkloads: [{seq_len: 64}]\n")
              .find("t.yaml:2:16: compile_cache") != std::string::npos);
  }
}

TEST_SUITE("report::results") {
  TEST_CASE("a compiled case says how long it compiled, from which cache, into how many graphs") {
    core::CaseResult r;
    r.spec.kernel = "py:m.py:A@compile";
    CHECK(report::compile_note(r) == "");
    r.metrics = {{"compile.time_ms", 35283.8},
                 {"compile.graphs", 2},
                 {"compile.graph_breaks", 1},
                 {"compile.recompiles", 0}};
    CHECK(report::compile_note(r) == "compiled in 35.3 s (fresh cache): 2 graphs, 1 graph break");
    r.spec.compile_cache_warm = true;
    r.metrics["compile.graphs"] = 1;
    r.metrics["compile.graph_breaks"] = 0;
    r.metrics["compile.recompiles"] = 3;
    CHECK(report::compile_note(r) ==
          "compiled in 35.3 s (warm cache): 1 graph, 0 graph breaks, 3 recompiles after the "
          "first call");
  }
}
