// attnprof env: what this machine is (CPU, LibTorch, CUDA runtime and driver, devices), the
// kernels a scenario can name (built-ins and the ops of --plugin libraries), which torch the
// worker was built against and how it was chosen, where LibTorch's CMake package is (for building
// a plugin against the same LibTorch), and the fingerprints runs are stored under. LibTorch and
// CUDA are asked through attnprof-worker.
#include <fmt/format.h>

#include <memory>

#include "harness/cli/commands.h"
#include "harness/env/environment.h"
#include "harness/worker/supervisor.h"

namespace attnprof::cli {

Action setup_env(CLI::App& sub) {
  struct Args {
    std::vector<std::string> plugins;
    std::string worker;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("--plugin", a->plugins, "Also load these plugin libraries and list their ops");
  sub.add_option("--worker", a->worker,
                 "The attnprof-worker to ask, or its build folder (default: the one beside "
                 "attnprof)");
  return [a] {
    worker::Spawn spawn{a->worker.empty() ? worker::default_worker()
                                          : worker::resolve_worker(a->worker, "--worker"),
                        {},
                        "worker"};
    for (const auto& p : a->plugins) spawn.args.push_back("--plugin=" + p);
    worker::Supervisor sup(spawn);
    const worker::Described& d = sup.described();
    fmt::print("{}", env::render(d.env));
    fmt::print("worker:         {}\n", spawn.executable);
    if (!d.env.torch_source.empty()) fmt::print("torch source:   {}\n", d.env.torch_source);
    if (!d.python_kernels.empty()) fmt::print("py: kernels:    {}\n", d.python_kernels);
    fmt::print("Torch_DIR:      {}  (cmake -DTorch_DIR=... to build a plugin against it)\n",
               d.torch_dir);
    std::string builtin;
    for (const auto& k : d.kernels)
      if (!k.starts_with("op:")) builtin += (builtin.empty() ? "" : ", ") + k;
    fmt::print("kernels:        {}\n", builtin);
    for (const auto& p : d.plugins) {
      std::string ops;
      for (const auto& o : p.ops) ops += (ops.empty() ? "" : ", ") + ("op:" + o);
      fmt::print("plugin:         {}: {}\n", p.path, ops.empty() ? "registered no op" : ops);
    }
    fmt::print("fingerprint (cpu): {}\n", env::fingerprint_for(d.env, "cpu").fingerprint());
    for (const auto& dev : d.env.devices)
      fmt::print("fingerprint (cuda:{}): {}\n", dev.index,
                 env::fingerprint_for(d.env, fmt::format("cuda:{}", dev.index)).fingerprint());
    for (const auto& l : sup.take_stderr()) fmt::print(stderr, "worker: {}\n", l);
    return 0;
  };
}

}  // namespace attnprof::cli
