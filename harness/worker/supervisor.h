// A worker that is replaced when it fails. attnprof run and attnprof ab talk to workers through
// this: a worker that dies (a signal, an abort), hangs past the case's deadline, breaks the
// protocol or reports a poisoned CUDA context ends the case it was running as an error that
// says so ("worker died, signal 11 (SIGSEGV)"); the next case gets a fresh worker. Nothing here
// throws for a failed case; it throws for what ends the whole command: bad input (exit 2) and
// a worker that cannot even start (exit 3).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/env/environment.h"
#include "harness/worker/client.h"

namespace attnprof::worker {

struct PluginInfo {
  std::string path;
  std::vector<std::string> ops;  // the ops loading it registered: "myns::attn"
};

// The worker's answer to describe.
struct Described {
  env::Description env;
  std::vector<std::string> kernels;  // built-in names and plugin ops already looked up
  std::vector<PluginInfo> plugins;
  std::string torch_dir;  // LibTorch's CMake package folder, for building plugins against
  std::string python_kernels;  // what py: kernels run with, or why they are off; empty: not said
};

// How long one case may take before its worker is called hung: the case's own budget (warm-up,
// time budget) three times over plus a minute for the correctness check, the traced pass and
// first-call initialization (module loading, cuBLAS handles), and ten more for a torch.compile
// variant's compile. `override_s` > 0 replaces it.
std::chrono::milliseconds case_timeout(const core::Case& c, double override_s = 0);

class Supervisor {
 public:
  explicit Supervisor(Spawn spawn);
  ~Supervisor();

  // The worker's description (starts it, and caches the answer). util::InputError when a plugin
  // cannot be loaded; util::EnvironmentError when the worker cannot start or dies describing
  // (a plugin whose initializer aborts).
  const Described& described();

  // attnprof run: the whole case in the worker.
  core::CaseResult run_case(const core::Case& c, bool trace, std::chrono::milliseconds timeout);

  // attnprof ab, step by step. prepare: nullopt when the case is ready to be measured, else its
  // final result. batch: the samples, and the final result when the batch ended the case.
  std::optional<core::CaseResult> prepare(const core::Case& c, std::chrono::milliseconds timeout);
  struct Batch {
    std::vector<core::Sample> samples;
    std::optional<core::CaseResult> ended;
  };
  Batch batch(double batch_ns, int min_calls, int max_calls, std::chrono::milliseconds timeout);
  core::CaseResult finish(bool trace, std::chrono::milliseconds timeout);

  // Ends the current worker; the next request starts a fresh one.
  void restart() { retire(); }

  // The worker's stderr lines since the last call; none are lost when a worker is replaced.
  std::vector<std::string> take_stderr();
  // The current worker's process id (starts one if none is running): attnprof ab places both
  // workers of a pair on the same CPUs (ab::Session).
  pid_t pid() { return client().pid(); }
  // How many workers have been started (1 + replacements).
  int starts() const { return m_starts; }
  const Spawn& spawn() const { return m_spawn; }

 private:
  Client& client();
  // Runs one request. nullopt while the case goes on (the reply says "ready"); else its final
  // result, where a worker failure becomes an error result for `c` and retires the worker.
  template <class F>
  std::optional<core::CaseResult> guarded(const core::Case& c, F&& f);
  void retire();

  Spawn m_spawn;
  std::unique_ptr<Client> m_client;
  std::optional<Described> m_described;
  core::Case m_current;  // the case prepare() started, for finish() and batch() errors
  std::vector<std::string> m_stderr;
  int m_starts = 0;
};

}  // namespace attnprof::worker
