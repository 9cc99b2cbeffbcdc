// Python kernels (python.h): the parts of a py: name and where its file is.
#include "harness/kernel/python.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <regex>

namespace attnprof::kernel {

namespace fs = std::filesystem;

bool is_python(std::string_view kernel) {
  return kernel.starts_with(kPythonPrefix) || kernel.starts_with(kTransformersPrefix) ||
         kernel == kFlexName || kernel.starts_with(std::string(kFlexName) + "@");
}

bool compiles(std::string_view kernel) {
  const auto k = parse_python(kernel);
  return k && k->compiles();
}

const std::vector<std::string>& compile_modes() {
  static const std::vector<std::string> modes = {
      "compile", "default", "lite", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"};
  return modes;
}

std::optional<PythonKernel> parse_python(std::string_view kernel, std::string* why) {
  auto no = [why](std::string text) -> std::optional<PythonKernel> {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  if (!is_python(kernel)) return no("a Python kernel is py:PATH.py:NAME");
  PythonKernel k;
  std::string_view rest = kernel;
  if (kernel.starts_with(kPythonPrefix)) {
    rest = kernel.substr(kPythonPrefix.size());
  } else if (kernel.starts_with(kTransformersPrefix)) {
    k.source = PythonKernel::Source::transformers;
    rest = kernel.substr(kTransformersPrefix.size());
  } else {
    k.source = PythonKernel::Source::flex;
  }
  // A mode follows the last '@' unless that '@' is part of the path or name.
  if (const auto at = rest.rfind('@');
      at != std::string_view::npos && rest.find_first_of(":/", at) == std::string_view::npos) {
    k.mode = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
    const auto& modes = compile_modes();
    if (std::find(modes.begin(), modes.end(), k.mode) == modes.end())
      return no(fmt::format("unknown torch.compile mode \"{}\" (modes: {})", k.mode,
                            fmt::join(modes, ", ")));
    if (k.mode == "compile") k.mode = "default";
  }
  if (k.source == PythonKernel::Source::flex) {
    k.name = std::string(kFlexName);
    return k;
  }
  if (k.source == PythonKernel::Source::transformers) {
    static const std::regex hf_name("[A-Za-z_][A-Za-z0-9_|]*");
    k.name = std::string(rest);
    if (!std::regex_match(k.name, hf_name))
      return no(fmt::format("\"{}\" is no attention function's name (hf:NAME, NAME one of "
                            "transformers' attn_implementation names: eager, sdpa, "
                            "flex_attention, ...)",
                            k.name));
    return k;
  }
  // The last colon separates the name, so that a path may hold colons of its own.
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos)
    return no("a Python kernel is py:PATH.py:NAME (NAME: the class, factory or function)");
  k.file = std::string(rest.substr(0, colon));
  k.name = std::string(rest.substr(colon + 1));
  if (k.file.size() < 4 || !k.file.ends_with(".py"))
    return no(fmt::format("\"{}\" is no Python file (a Python kernel is py:PATH.py:NAME)", k.file));
  static const std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
  if (!std::regex_match(k.name, ident))
    return no(fmt::format("\"{}\" is no Python name (a Python kernel is py:PATH.py:NAME)", k.name));
  return k;
}

std::string python_file(std::string_view kernel, const std::string& scenario_file) {
  const auto k = parse_python(kernel);
  if (k && k->builtin()) return "";
  fs::path p(k ? k->file : std::string(kernel));
  if (p.is_relative() && !scenario_file.empty()) p = fs::path(scenario_file).parent_path() / p;
  std::error_code ec;
  return fs::absolute(p, ec).lexically_normal().string();
}

std::string absolute_python_kernel(std::string_view kernel, const std::string& scenario_file) {
  const auto k = parse_python(kernel);
  if (!k || k->builtin()) return std::string(kernel);
  // The mode as written: "@compile" stays "@compile", so the name still reads as the user's.
  const auto at = kernel.rfind('@');
  const std::string_view suffix = k->mode.empty() ? "" : kernel.substr(at);
  return fmt::format("{}{}:{}{}", kPythonPrefix, python_file(kernel, scenario_file), k->name,
                     suffix);
}

std::vector<std::string> python_substitutes(const std::vector<core::Case>& cases,
                                            const std::string& repo, const std::string& tree) {
  std::vector<std::string> out, seen;
  for (const auto& c : cases) {
    const auto k = parse_python(c.kernel);
    if (!k || k->builtin() || std::find(seen.begin(), seen.end(), c.kernel) != seen.end())
      continue;
    seen.push_back(c.kernel);
    const fs::path rel = fs::path(python_file(c.kernel, c.loc.file)).lexically_relative(repo);
    if (rel.empty() || *rel.begin() == "..") continue;
    const auto at = c.kernel.rfind('@');
    const std::string mode = k->mode.empty() ? "" : c.kernel.substr(at);
    out.push_back(fmt::format("--substitute={}={}{}:{}{}", c.kernel, kPythonPrefix,
                              (fs::path(tree) / rel).string(), k->name, mode));
  }
  return out;
}

std::optional<std::string> python_frame(const std::vector<std::string>& stderr_lines,
                                        const std::string& file) {
  static const std::regex frame(R"re(File "([^"]+)", line ([0-9]+),? in (\S+))re");
  // The last dump in the output is the one of the death; its first frame in `file` the innermost.
  std::optional<std::string> found;
  bool in_dump = false;
  for (const auto& line : stderr_lines) {
    std::smatch m;
    if (!std::regex_search(line, m, frame)) {
      in_dump = false;
      continue;
    }
    if (!in_dump) found.reset();
    in_dump = true;
    if (!found && m[1].str() == file) found = fmt::format("{}:{} (in {})", m[1].str(), m[2].str(), m[3].str());
  }
  return found;
}

}  // namespace attnprof::kernel
