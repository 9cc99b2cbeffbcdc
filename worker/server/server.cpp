// attnprof-worker's request loop (server.h): its options, the hello, plugins, and the answer to
// each protocol request, every failure a reply rather than a crash.
#include "worker/server/server.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "harness/cli/bounds.h"
#include "harness/cli/options.h"
#include "harness/kernel/package.h"
#include "harness/kernel/python.h"
#include "harness/core/json.h"
#include "harness/util/allocator.h"
#include "harness/util/error.h"
#include "harness/worker/protocol.h"
#include "worker/env/probe.h"
#include "worker/kernel/variants/variants.h"
#include "worker/kernel/plugin.h"
#include "worker/kernel/registry.h"
#include "worker/runner/runner.h"

#ifdef ATTNPROF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace attnprof::worker {
namespace {

using nlohmann::json;

struct Args {
  std::vector<std::string> plugins;
  std::vector<std::string> env;         // NAME=VALUE, set before anything runs
  std::vector<std::string> substitute;  // FROM=TO: run kernel TO where a case names FROM
  runner::Options runner;
  bool no_trace = false;
  bool malloc_default = false;
};

struct Plugin {
  std::string path;
  std::vector<std::string> ops;  // what loading it registered
};

std::set<std::string> registered_ops() {
  std::set<std::string> out;
  for (const auto& op : c10::Dispatcher::singleton().getAllOpNames())
    out.insert(op.overload_name.empty() ? op.name : op.name + "." + op.overload_name);
  return out;
}

std::pair<std::string, std::string> split_assignment(const std::string& s, const char* option) {
  const auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    throw util::InputError(
        util::Diagnostic{option, 0, 0, fmt::format("\"{}\": expected NAME=VALUE", s)});
  return {s.substr(0, eq), s.substr(eq + 1)};
}

json diagnostics_json(const util::InputError& e) {
  json out = json::array();
  for (const auto& d : e.diagnostics())
    out.push_back({{"file", d.file}, {"line", d.line}, {"col", d.col}, {"message", d.message}});
  return out;
}

class Server {
 public:
  Server(Args args, FILE* out) : m_args(std::move(args)), m_out(out) {
    for (const auto& s : m_args.substitute) {
      auto [from, to] = split_assignment(s, "--substitute");
      // A package named on the command line is where the user stands, not beside the scenario.
      // So is a Python module's file.
      if (kernel::is_package(to)) to = std::string(kernel::kPackagePrefix) + kernel::package_path(to, "");
      if (kernel::is_python(to)) to = kernel::absolute_python_kernel(to, "");
      m_substitute.emplace(from, to);
    }
    m_args.runner.trace = !m_args.no_trace;
  }

  // Plugins load after the hello, so that a bad path reaches attnprof as an answer (exit 2)
  // rather than as a worker that died at start. A library that aborts while loading (two
  // libraries registering one TORCH_LIBRARY namespace) still kills the worker: attnprof then
  // reports the death with the worker's last words.
  void load_plugins() {
    try {
      for (const auto& p : m_args.plugins) {
        const auto before = registered_ops();
        kernel::load_plugin(p);
        Plugin loaded{p, {}};
        for (const auto& op : registered_ops())
          if (!before.count(op)) loaded.ops.push_back(op);
        m_plugins.push_back(std::move(loaded));
      }
    } catch (const util::InputError& e) {
      m_startup_error = std::make_unique<util::InputError>(e);
    }
  }

  int loop() {
    std::string line;
    while (std::getline(std::cin, line)) {
      std::string why;
      auto req = decode(line, &why);
      json reply;
      if (!req) {
        reply = {{"id", nullptr},
                 {"ok", false},
                 {"kind", "internal"},
                 {"error", fmt::format("request is {}", why)}};
        send(reply);
        continue;
      }
      const json id = (*req)["id"];
      const std::string op = req->value("op", "");
      if (op == "quit") return 0;
      bool exit_after = false;
      try {
        if (m_startup_error) throw *m_startup_error;
        reply = dispatch(op, *req, exit_after);
        reply["ok"] = true;
      } catch (const util::InputError& e) {
        std::string text;
        for (const auto& d : e.diagnostics()) text += (text.empty() ? "" : "\n") + d.to_string();
        reply = {{"ok", false}, {"kind", "input"}, {"error", text}, {"diagnostics", diagnostics_json(e)}};
      } catch (const util::EnvironmentError& e) {
        reply = {{"ok", false}, {"kind", "environment"}, {"error", e.what()}};
      } catch (const c10::Error& e) {
        reply = {{"ok", false}, {"kind", "internal"}, {"error", e.what_without_backtrace()}};
      } catch (const std::exception& e) {
        reply = {{"ok", false}, {"kind", "internal"}, {"error", e.what()}};
      } catch (...) {
        reply = {{"ok", false}, {"kind", "internal"}, {"error", "unknown exception"}};
      }
      reply["id"] = id;
      send(reply);
      if (exit_after) return 0;
    }
    return 0;
  }

  void send(const json& j) {
    const std::string s = encode(j) + "\n";
    std::fwrite(s.data(), 1, s.size(), m_out);
    std::fflush(m_out);
  }

 private:
  runner::Runner& runner() {
    // Describing the machine initializes CUDA: once, on first use, not before the hello.
    if (!m_runner) m_runner = std::make_unique<runner::Runner>(env::describe(), m_args.runner);
    return *m_runner;
  }

  // A case as this worker runs it: --substitute swaps the kernel, the key stays the case's.
  core::Case as_run(core::Case c) const {
    if (auto it = m_substitute.find(c.kernel); it != m_substitute.end()) c.kernel = it->second;
    return c;
  }
  core::CaseResult as_asked(core::CaseResult r, const core::Case& asked) const {
    if (r.spec.kernel != asked.kernel && !r.backend.empty())
      r.backend = r.spec.kernel + ": " + r.backend;
    else if (r.spec.kernel != asked.kernel)
      r.backend = r.spec.kernel;
    r.spec.kernel = asked.kernel;
    r.spec.key = asked.key;
    return r;
  }

  // After a case error on a GPU: is the context still usable? A sticky error (an illegal
  // address, a device-side assert) poisons every later CUDA call in this process, so the
  // worker must be replaced, and says so.
  bool device_poisoned(const core::CaseResult& r) const {
#ifdef ATTNPROF_HAVE_CUDA
    if (r.status != core::CaseStatus::error || r.spec.hardware.device == "cpu") return false;
    if (cudaDeviceSynchronize() == cudaSuccess) return false;
    cudaGetLastError();
    return cudaDeviceSynchronize() != cudaSuccess;
#else
    (void)r;
    return false;
#endif
  }

  // A torch.compile case from a fresh compile cache (docs/python.md).
  static bool compiled_fresh(const core::Case& c) {
    return kernel::compiles(c.kernel) && !c.compile_cache_warm;
  }

  json result_reply(const core::CaseResult& r, const core::Case& asked, bool& exit_after) {
    json reply = {{"result", core::to_json(as_asked(r, asked))}};
    if (device_poisoned(r)) {
      reply["restart"] = "the CUDA context has a sticky error";
      exit_after = true;
    } else if (compiled_fresh(as_run(asked))) {
      // Inductor keeps what it compiled in the process (kernels by their source's hash, past
      // any cache folder): the next compile case gets a process that has compiled nothing, as
      // its "fresh" cache promises. Not a failure: the case's result says nothing of it.
      reply["retire"] = true;
      exit_after = true;
    }
    return reply;
  }

  // A prepare or batch reply: whether the case goes on, and where it ended early (a failed
  // check, a skip, a kernel error) its result, the session then closed.
  json with_end_if_done(json reply, bool& exit_after) {
    reply["ready"] = m_session->ready();
    if (!m_session->ready()) {
      reply.update(result_reply(m_session->result(), m_asked, exit_after));
      m_session.reset();
    }
    return reply;
  }

  json dispatch(const std::string& op, const json& req, bool& exit_after) {
    if (op == "describe") {
      json plugins = json::array();
      for (const auto& p : m_plugins) plugins.push_back({{"path", p.path}, {"ops", p.ops}});
      return {{"env", env::to_json(runner().environment())},
              {"kernels", kernel::registry().names()},
              {"plugins", plugins},
              {"torch_dir", ATTNPROF_TORCH_DIR},
              {"python_kernels", kernel::python_kernels_status()}};
    }
    if (op == "run") {
      const core::Case asked = core::case_from_json(req.at("case"));
      auto session = runner().prepare(as_run(asked));
      session->measure_adaptive();
      return result_reply(session->finish({}, req.value("trace", true)), asked, exit_after);
    }
    if (op == "prepare") {
      m_asked = core::case_from_json(req.at("case"));
      m_samples.clear();
      m_session = runner().prepare(as_run(m_asked));
      m_session->warm_up();
      return with_end_if_done({}, exit_after);
    }
    if (op == "batch") {
      if (!m_session) throw std::logic_error("batch without a prepared case");
      // "min" (calls at least) is absent from an older attnprof's requests: one call.
      auto samples = m_session->batch(req.at("ns").get<double>(), req.value("min", 1),
                                      req.at("max").get<int>());
      m_samples.insert(m_samples.end(), samples.begin(), samples.end());
      return with_end_if_done({{"samples", samples_to_json(samples)}}, exit_after);
    }
    if (op == "finish") {
      if (!m_session) throw std::logic_error("finish without a prepared case");
      core::CaseResult r = m_session->finish(std::move(m_samples), req.value("trace", true));
      m_session.reset();
      m_samples.clear();
      return result_reply(r, m_asked, exit_after);
    }
    throw std::invalid_argument(fmt::format("unknown op \"{}\"", op));
  }

  Args m_args;
  FILE* m_out;
  std::map<std::string, std::string> m_substitute;
  std::vector<Plugin> m_plugins;
  std::unique_ptr<util::InputError> m_startup_error;
  std::unique_ptr<runner::Runner> m_runner;
  std::unique_ptr<runner::CaseSession> m_session;
  core::Case m_asked;
  std::vector<core::Sample> m_samples;
};

}  // namespace

int serve(int argc, char** argv) {
  CLI::App app{
      "attnprof-worker: runs attention kernels for attnprof over a line protocol on stdin and "
      "stdout. Started by `attnprof run` and `attnprof ab`; not meant to be run by hand."};
  Args a;
  app.add_option("--plugin", a.plugins, "Load a shared library of TORCH_LIBRARY ops");
  app.add_option("--threads", a.runner.threads, "CPU intra-op threads (default: the case's)")
      ->check(cli::thread_bound());
  app.add_flag("--no-trace", a.no_trace, "Skip the traced pass and the cost matrix");
  app.add_flag("--require-hardware", a.runner.require_hardware,
               "Fail (not skip) cases whose hardware this machine does not match");
  app.add_option("--perfetto", a.runner.perfetto_dir, "Write each traced pass into this folder");
  app.add_flag("--counters", a.runner.hardware_counters, "GPU DRAM counters (range profiler)");
  app.add_flag("--require-idle-gpu", a.runner.require_idle_gpu,
               "End a GPU case with an error when another process is on its GPU");
  app.add_option("--env", a.env, "Set NAME=VALUE in this worker's environment");
  app.add_option("--substitute", a.substitute,
                 "FROM=TO: run kernel TO wherever a case names kernel FROM");
  app.add_flag("--malloc-default", a.malloc_default,
               "Keep glibc malloc's defaults, which return freed memory to the system and fault "
               "it in again on the next call");
  app.set_version_flag("--version", fmt::format("attnprof-worker {} (protocol {})",
                                                build_version, protocol_version));
  cli::one_value_per_occurrence(app);  // `--plugin a.so b.so` is not two plugins
  cli::bound_every_number(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : util::exit_bad_input;
  }
  try {
    for (const auto& e : a.env) {
      auto [name, value] = split_assignment(e, "--env");
      setenv(name.c_str(), value.c_str(), 1);
    }
  } catch (const util::InputError& e) {
    for (const auto& d : e.diagnostics()) fmt::print(stderr, "{}\n", d.to_string());
    return util::exit_bad_input;
  }

  // Freed memory stays in the process (util/allocator.h says why), unless --malloc-default.
  if (!a.malloc_default) util::keep_freed_memory();
  // attnprof ab's layout padding (ab/session.cpp): its length also offsets the heap.
  if (const char* pad = std::getenv("ATTNPROF_LAYOUT_PAD")) util::offset_heap(std::strlen(pad));

  // The protocol owns the original stdout; everything else that writes to stdout (LibTorch
  // warnings, a plugin's printf) lands on stderr, where attnprof collects it.
  const int proto_fd = dup(STDOUT_FILENO);
  FILE* out = proto_fd >= 0 ? fdopen(proto_fd, "w") : nullptr;
  if (!out || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("attnprof-worker: cannot set up the protocol stream");
    return util::exit_environment;
  }
  Server server(std::move(a), out);
  server.send(hello());
  server.load_plugins();
  return server.loop();
}

}  // namespace attnprof::worker
