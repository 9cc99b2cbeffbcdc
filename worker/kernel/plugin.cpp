// Plugins (plugin.h): loading a user's TORCH_LIBRARY library, and lookup, which turns an
// "op:ns::name" or "aoti:PATH.pt2" name into a variant registered on first use.
#include "worker/kernel/plugin.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include "harness/kernel/package.h"
#include "harness/kernel/python.h"
#include "harness/util/error.h"
#include "worker/kernel/variants/variants.h"

namespace attnprof::kernel {

void load_plugin(const std::string& path) {
  // A name without a slash is a file here, as the user means it; dlopen would search the
  // loader's path instead and not find ./libx.so.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_GLOBAL: the plugin's ops may call back into LibTorch symbols it shares with us.
  if (!dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL))
    throw util::InputError(
        util::Diagnostic{path, 0, 0, fmt::format("cannot load plugin: {}", dlerror())});
}

namespace {

std::optional<Variant> make_op_variant(std::string_view name, std::string* why) {
  const std::string op_name(name.substr(3));  // after "op:"
  auto handle = c10::Dispatcher::singleton().findSchema({op_name, ""});
  if (!handle) {
    if (why)
      *why = fmt::format("no op \"{}\" is registered (load its library with --plugin)", op_name);
    return std::nullopt;
  }
  const auto& args = handle->schema().arguments();
  const bool has_mask = args.size() >= 6;
  if (args.size() < 5 || args.size() > 6) {
    if (why)
      *why = fmt::format(
          "op \"{}\" has schema {} but attnprof calls (Tensor q, Tensor k, Tensor v, "
          "bool is_causal, float scale[, Tensor? attn_mask]) -> Tensor",
          op_name, c10::toString(handle->schema()));
    return std::nullopt;
  }
  Variant v;
  v.name = std::string(name);
  v.description = "plugin op " + op_name;
  v.unsupported = [](const core::Case&) { return std::optional<std::string>{}; };
  v.launch = [op = *handle, has_mask, op_name](const Inputs& in) {
    if (in.mask.defined() && !has_mask)
      throw Unsupported(
          fmt::format("op \"{}\" takes no attn_mask and this case needs one", op_name));
    torch::jit::Stack stack{in.q, in.k, in.v, in.spec->mask == core::MaskKind::causal, in.scale};
    if (has_mask) stack.emplace_back(in.mask.defined() ? c10::IValue(in.mask) : c10::IValue());
    op.callBoxed(stack);
    return stack.at(0).toTensor();
  };
  v.chosen_backend = [op_name](const Inputs&) { return op_name; };
  return v;
}

}  // namespace

const Variant* lookup(std::string_view name, std::string* why) {
  if (const Variant* v = registry().find(name)) return v;
  if (is_package(name)) {
    registry().add(make_package_variant(name));
    return registry().find(name);
  }
  if (is_python(name)) {
    std::string bad;
    if (!parse_python(name, &bad)) {
      if (why) *why = fmt::format("kernel \"{}\": {}", name, bad);
      return nullptr;
    }
    registry().add(make_python_variant(name));
    return registry().find(name);
  }
  if (name.rfind("op:", 0) != 0) {
    if (why) *why = fmt::format("unknown kernel \"{}\"", name);
    return nullptr;
  }
  auto v = make_op_variant(name, why);
  if (!v) return nullptr;
  registry().add(std::move(*v));
  return registry().find(name);
}

}  // namespace attnprof::kernel
