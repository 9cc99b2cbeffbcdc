// Python attention as a kernel, torch-free: a scenario names a user's module as
// "py:PATH:NAME", run eagerly, or "py:PATH:NAME@MODE", run under torch.compile in that mode.
// What attnprof, which links no Python, needs of them: the name's parts, where the file is and
// which compile modes exist. The worker's side, which imports and calls the module in its
// embedded interpreter, is worker/kernel/variants/python.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::kernel {

inline constexpr std::string_view kPythonPrefix = "py:";
// The built-in Python kernels, run by the same machinery (worker/kernel/variants/
// python_builtins.py): "flex[@MODE]", FlexAttention with the case's mask as a block mask and its
// score modifier as a score_mod; "hf:NAME[@MODE]", transformers' attention function NAME
// (eager, sdpa, flex_attention, ...) called as its models call it.
inline constexpr std::string_view kFlexName = "flex";
inline constexpr std::string_view kTransformersPrefix = "hf:";

// A user's module (py:), flex or hf: (all run in the worker's embedded Python).
bool is_python(std::string_view kernel);

struct PythonKernel {
  enum class Source { file, flex, transformers };
  Source source = Source::file;
  std::string file;  // as written: PATH (relative to the scenario's folder unless absolute);
                     // empty for flex and hf:
  std::string name;  // a class, a factory, or the attention function itself; "flex"; hf:'s NAME
  std::string mode;  // "" eager; else a torch.compile mode ("default" for @compile)
  // Whether the case's first call compiles (a mode; transformers' flex_attention, which compiles
  // FlexAttention itself as its models run it): it then gets the compile's time, a fresh cache
  // and a worker of its own (docs/python.md).
  bool compiles() const {
    return !mode.empty() || (source == Source::transformers && name == "flex_attention");
  }
  bool builtin() const { return source != Source::file; }
};

// The parts of a "py:PATH.py:NAME[@MODE]", "flex[@MODE]" or "hf:NAME[@MODE]" name, or why it is
// not one (for the message at the spot): PATH must end in .py, NAME be a Python identifier (hf:
// names may hold '|', as transformers' "paged|eager"), MODE one of compile_modes().
std::optional<PythonKernel> parse_python(std::string_view kernel, std::string* why = nullptr);

// Whether `kernel` is a Python kernel whose first call compiles (PythonKernel::compiles).
bool compiles(std::string_view kernel);

// The modes torch.compile takes (torch._inductor.list_mode_options), plus "compile", which is
// "default" under a shorter name. The worker checks the mode again against its torch.
const std::vector<std::string>& compile_modes();

// The module file of a "py:" kernel (empty for flex and hf:, which have none): PATH as given when absolute, else relative to the folder
// of the scenario file that names it (as aoti: packages and mask_file are), made absolute.
std::string python_file(std::string_view kernel, const std::string& scenario_file);

// The kernel name with its file made absolute ("py:/abs/attn.py:Attn@compile"): what a worker
// started elsewhere (ab's base tree) is told to run under a case's name.
std::string absolute_python_kernel(std::string_view kernel, const std::string& scenario_file);

// For each py: kernel of `cases` whose file lies inside `repo`, the worker argument that runs the
// same file of another checkout of it, `tree`, under the case's name:
// "--substitute=py:m.py:A@compile=py:TREE/sub/m.py:A@compile" (bisect's steps: each commit's
// own module; ci/github/sides.sh does the same for the gate). Each kernel once.
std::vector<std::string> python_substitutes(const std::vector<core::Case>& cases,
                                            const std::string& repo, const std::string& tree);

// The innermost frame in `file` of a Python stack the worker wrote to stderr before it died
// (faulthandler's dump on a fatal signal, or the runtime's on os._exit: lines `File "PATH",
// line N in NAME`, most recent call first), as "PATH:N (in NAME)"; nullopt when none is there.
std::optional<std::string> python_frame(const std::vector<std::string>& stderr_lines,
                                        const std::string& file);

}  // namespace attnprof::kernel
