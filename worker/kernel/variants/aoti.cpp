// Compiled code as a kernel: "aoti:PATH.pt2", an AOTInductor package (torch.export, then
// Inductor's generated C++/Triton code in a zip) run through LibTorch's AOTIModelPackageLoader.
// Per case, before anything is timed, the package's metadata is read without loading its code
// and checked against the case: another torch version is an error naming both (the generated
// code calls into LibTorch's ABI of its day), another device, dtype, level, geometry or mask a
// skip naming what differs, inputs it does not declare an error naming both lists; then the
// code is loaded (a zip extract and a dlopen). At the first call the inputs' dims are checked
// against the dims the package accepts (a skip naming the dim). ci/aoti-package.py writes the
// metadata ("attnprof", a JSON object); a package without it, a user's own, is called by the
// convention of docs/scenarios.md and its failures are the case's errors, with LibTorch's message.
//
// Calling convention: kernel level (q, k, v[, mask]) -> O, as plugins are called; block level
// (x, wqkv, wo, k_cache, v_cache[, mask]) and layer level (x, wqkv, wo, k_cache, v_cache,
// norm1, norm2, w1, w2[, w3][, mask]) -> the block's or layer's output, which replaces the
// harness's workload.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/headeronly/version.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "harness/kernel/package.h"
#include "worker/kernel/variants/variants.h"

namespace attnprof::kernel {
namespace {

using nlohmann::json;

// The "format" ci/aoti-package.py writes into the metadata (its FORMAT).
constexpr int kMetadataFormat = 1;

// The loaded package of the case at hand.
struct Loaded {
  std::string path;
  json meta;  // our metadata; null for a package made elsewhere
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
  bool dims_checked = false;
  std::shared_ptr<const core::Case> spec;  // the case it was prepared for, for call_error
};

std::string release(const std::string& version) {  // "2.11.0+cu130" -> "2.11.0"
  return version.substr(0, version.find('+'));
}

std::string device_kind(const std::string& device) {  // "cuda:1" -> "cuda"
  return device.substr(0, device.find(':'));
}

std::unordered_map<std::string, std::string> read_metadata(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(
        fmt::format("{}: no such package (ci/aoti-package.sh makes it from the scenario)", path));
  try {
    return torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(path, "model");
  } catch (const c10::Error& e) {
    throw std::runtime_error(fmt::format("{}: not a readable AOTInductor package: {}", path,
                                         e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: not a readable AOTInductor package: {}", path, e.what()));
  }
}

const char* level_name(core::Level l) {
  return l == core::Level::kernel ? "kernel" : l == core::Level::block ? "block" : "layer";
}

// What the case needs that the package (our metadata) was not made for: nullopt when it fits.
std::optional<std::string> mismatch(const json& m, const core::Case& c) {
  auto differs = [](std::string what, const auto& pkg, const auto& here) {
    return fmt::format("the package holds {} {}; this case has {}", what, pkg, here);
  };
  if (m.value("device", "") != device_kind(c.hardware.device))
    return fmt::format("the package is for {}; this case runs on {}", m.value("device", "?"),
                       c.hardware.device);
  if (m.value("dtype", "") != core::to_string(c.dtype))
    return differs("dtype", m.value("dtype", "?"), core::to_string(c.dtype));
  if (m.value("level", "") != level_name(c.level))
    return fmt::format("the package holds a {}; this case is at {} level", m.value("level", "?"),
                       level_name(c.level));
  const json& g = m.value("model", json::object());
  const int hidden = c.model.hidden > 0 ? c.model.hidden : c.model.heads * c.model.head_dim;
  const std::pair<const char*, int> dims[] = {
      {"heads", c.model.heads}, {"kv_heads", c.model.kv_heads}, {"head_dim", c.model.head_dim}};
  for (const auto& [name, value] : dims)
    if (g.value(name, -1) != value) return differs(name, g.value(name, -1), value);
  if (c.level != core::Level::kernel) {
    const int pkg_hidden = g.value("hidden", 0) > 0 ? g.value("hidden", 0)
                                                    : g.value("heads", 0) * g.value("head_dim", 0);
    if (pkg_hidden != hidden) return differs("hidden", pkg_hidden, hidden);
    if (c.level == core::Level::layer) {
      if (g.value("norm", "") != c.model.norm)
        return differs("norm", g.value("norm", "?"), c.model.norm);
      if (g.value("mlp_hidden", 0) != c.model.mlp_hidden)
        return differs("mlp_hidden", g.value("mlp_hidden", 0), c.model.mlp_hidden);
    }
  }
  const std::string phase = c.q_len == c.kv_len ? "prefill" : "decode";
  if (m.value("phase", "") != phase) return differs("phase", m.value("phase", "?"), phase);
  if (m.value("mask", "") != core::to_string(c.mask))
    return differs("mask", m.value("mask", "?"), core::to_string(c.mask));
  if (m.value("window", 0) != c.window) return differs("window", m.value("window", 0), c.window);
  // A user's module holds its own scale (metadata null): only ours are made for the case's.
  const double scale = softmax_scale(c);
  if (m.contains("scale") && m["scale"].is_number() &&
      std::abs(m.value("scale", 0.0) - scale) > 1e-9 * scale)
    return differs("scale", m.value("scale", 0.0), scale);
  return std::nullopt;
}

std::string joined(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

// What a case with a mask the package does not take (or the reverse) is told to do.
std::string mask_hint(const core::Case& c, bool passes_mask, bool takes_mask) {
  if (passes_mask && !takes_mask)
    return fmt::format(
        ": mask {} is an input of this case (docs/scenarios.md has its layout); a module that "
        "masks itself runs with mask: none",
        core::to_string(c.mask));
  if (!passes_mask && takes_mask) return ": the package was made for cases that pass a mask";
  return "";
}

// The inputs the case passes against those our metadata says the package takes: both named.
void check_inputs(const std::string& path, const json& m, const core::Case& c) {
  std::vector<std::string> takes;
  for (const auto& i : m.value("inputs", json::array())) takes.push_back(i.value("name", "?"));
  const std::vector<std::string> passes = package_inputs(c);
  if (takes == passes) return;
  auto has_mask = [](const std::vector<std::string>& v) {
    return std::find(v.begin(), v.end(), "mask") != v.end();
  };
  throw std::runtime_error(
      fmt::format("{}: the package takes {} inputs ({}); this case passes {} "
                  "({}){}",
                  path, takes.size(), joined(takes), passes.size(), joined(passes),
                  mask_hint(c, has_mask(passes), has_mask(takes))));
}

// The inputs' dims against the dims the package accepts (metadata "inputs": per input, a size
// or {"name", "min", "max"} per dim).
void check_dims(const json& inputs, const std::vector<at::Tensor>& args) {
  if (inputs.size() != args.size()) {
    std::string names;
    for (const auto& i : inputs) names += (names.empty() ? "" : ", ") + i.value("name", "?");
    throw Unsupported(fmt::format("the package takes {} inputs ({}); this case passes {}",
                                  inputs.size(), names, args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string name = inputs[i].value("name", "?");
    const json& dims = inputs[i].value("dims", json::array());
    if (dims.size() != static_cast<size_t>(args[i].dim()))
      throw Unsupported(fmt::format("input {} has {} dims; the package takes {}", name,
                                    args[i].dim(), dims.size()));
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t size = args[i].size(static_cast<int64_t>(d));
      if (dims[d].is_number() && dims[d].get<int64_t>() != size)
        throw Unsupported(fmt::format("input {} dim {} is {}; the package was made for {}", name, d,
                                      size, dims[d].get<int64_t>()));
      if (dims[d].is_object() &&
          (size < dims[d].value("min", int64_t(0)) || size > dims[d].value("max", int64_t(0))))
        throw Unsupported(fmt::format("input {} dim {} ({}) is {}; the package takes {}..{}", name,
                                      d, dims[d].value("name", "?"), size, dims[d].value("min", 0),
                                      dims[d].value("max", 0)));
    }
  }
}

// A failed call's message: LibTorch's, and for a package without our metadata called with
// another number of inputs than it takes, both counts and the inputs this case passes.
std::string call_error(const Loaded& p, const std::string& what) {
  static const std::regex count_re("expected inputs vector size to be ([0-9]+), but got ([0-9]+)");
  std::smatch m;
  if (!p.spec || !std::regex_search(what, m, count_re)) return fmt::format("{}: {}", p.path, what);
  const auto passes = package_inputs(*p.spec);
  // One input fewer than the case passes, the last of them a mask: a module that masks itself.
  const bool mask = passes.back() == "mask" && std::stoul(m[1].str()) + 1 == passes.size();
  return fmt::format("{}: {} (the package takes {} inputs; this case passes {}: {}{})", p.path,
                     what, m[1].str(), m[2].str(), joined(passes), mask_hint(*p.spec, mask, false));
}

at::Tensor call(Loaded& p, std::vector<at::Tensor> args) {
  if (!p.loader) throw std::logic_error("aoti: the package was called before it was prepared");
  if (!p.dims_checked && p.meta.is_object())
    check_dims(p.meta.value("inputs", json::array()), args);
  p.dims_checked = true;
  std::vector<at::Tensor> out;
  try {
    out = p.loader->run(args);
  } catch (const c10::Error& e) {
    throw std::runtime_error(call_error(p, e.what_without_backtrace()));
  } catch (const std::exception& e) {  // the loader's own checks throw runtime_error
    throw std::runtime_error(call_error(p, e.what()));
  }
  if (out.empty()) throw std::runtime_error(p.path + ": the package returned no output");
  return out.front();
}

// A package made one per shape (its module refused dynamic dims: ci/aoti-package.py,
// make_per_shape) has PATH.shapes.json beside it naming each shape's file: the case's own is the
// one to load. PATH itself otherwise.
std::string package_for_shape(const std::string& path, const core::Case& c) {
  std::ifstream in(path + ".shapes.json");
  if (!in) return path;
  const json index = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!index.is_object() || !index.contains("shapes") || !index["shapes"].is_object())
    throw std::runtime_error(fmt::format("{}.shapes.json: not a per-shape package index (make "
                                         "the package again)",
                                         path));
  const std::string shape = fmt::format("b{}-q{}-kv{}", c.batch, c.q_len, c.kv_len);
  const json& shapes = index["shapes"];
  if (!shapes.contains(shape) || !shapes[shape].is_string()) {
    std::vector<std::string> have;
    for (const auto& [name, file] : shapes.items()) have.push_back(name);
    throw Unsupported(fmt::format("{} is one package per shape ({}: its module refused dynamic "
                                  "dims) and none is for {}: make it again for this scenario",
                                  path, joined(have), shape));
  }
  return (std::filesystem::path(path).parent_path() / shapes[shape].get<std::string>()).string();
}

void prepare(Loaded& p, const core::Case& c) {
  p = Loaded{};
  p.path = package_for_shape(package_path(c), c);
  p.spec = std::make_shared<const core::Case>(c);
  const auto meta = read_metadata(p.path);
  if (auto it = meta.find("AOTI_DEVICE_KEY");
      it != meta.end() && it->second != device_kind(c.hardware.device))
    throw Unsupported(
        fmt::format("the package is for {}; this case runs on {}", it->second, c.hardware.device));
  if (auto it = meta.find("attnprof"); it != meta.end()) {
    p.meta = json::parse(it->second, nullptr, /*allow_exceptions=*/false);
    if (!p.meta.is_object())
      throw std::runtime_error(p.path + ": the package's attnprof metadata is not a JSON object");
    // A metadata format this worker does not know cannot be checked: rebuilding is the fix.
    if (const int format = p.meta.value("format", 0); format != kMetadataFormat)
      throw std::runtime_error(fmt::format(
          "{}: package metadata format {}; this worker reads format {}: make it again with {}",
          p.path, format, kMetadataFormat,
          p.meta.value("script", std::string("ci/aoti-package.sh"))));
    const std::string made_by = p.meta.value("torch", "?");
    if (release(made_by) != TORCH_VERSION)
      throw std::runtime_error(
          fmt::format("{}: package made by torch {}; this worker runs LibTorch {}: make it "
                      "again with {}",
                      p.path, made_by, TORCH_VERSION,
                      p.meta.value("script", std::string("ci/aoti-package.sh"))));
    if (auto why = mismatch(p.meta, c)) throw Unsupported(*why);
    check_inputs(p.path, p.meta, c);
  }
  const at::Device dev =
      c.hardware.device == "cpu" ? at::Device(at::kCPU) : at::Device(c.hardware.device);
  try {
    p.loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        p.path, "model", /*run_single_threaded=*/false, /*num_runners=*/1,
        dev.is_cpu() ? c10::DeviceIndex(-1) : std::max<c10::DeviceIndex>(0, dev.index()));
  } catch (const c10::Error& e) {
    throw std::runtime_error(
        fmt::format("{}: cannot load the package: {}", p.path, e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: cannot load the package: {}", p.path, e.what()));
  }
}

}  // namespace

Variant make_package_variant(std::string_view name) {
  auto loaded = std::make_shared<Loaded>();
  Variant v;
  v.name = std::string(name);
  v.description = "AOTInductor package " + std::string(name.substr(kPackagePrefix.size()));
  v.unsupported = [](const core::Case&) { return std::optional<std::string>{}; };
  v.prepare = [loaded](const core::Case& c) { prepare(*loaded, c); };
  v.launch = [loaded](const Inputs& in) { return call(*loaded, convention_args(in)); };
  v.launch_block = [loaded](const BlockInputs& in) {
    return call(*loaded, convention_args(in));
  };
  v.chosen_backend = [loaded](const Inputs&) {
    return loaded->meta.is_object()
               ? fmt::format("aoti (torch {})", loaded->meta.value("torch", "?"))
               : std::string("aoti (no attnprof metadata)");
  };
  return v;
}

}  // namespace attnprof::kernel
