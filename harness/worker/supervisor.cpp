// The Supervisor (supervisor.h): a worker per case as needed, each failure turned into the
// case's error, a fresh worker started for the next case.
#include "harness/worker/supervisor.h"

#include <fmt/format.h>

#include "harness/core/json.h"
#include "harness/kernel/python.h"
#include "harness/util/error.h"
#include "harness/worker/protocol.h"

namespace attnprof::worker {

using nlohmann::json;

namespace {

core::CaseResult error_result(const core::Case& c, const std::string& why) {
  core::CaseResult r;
  r.spec = c;
  r.status = core::CaseStatus::error;
  r.message = why;
  return r;
}

// ok:false from the worker: bad input ends the command (exit 2), as it would have in-process;
// an environment error too (exit 3); anything else is this case's error.
[[noreturn]] void rethrow_command_error(const RemoteError& e) {
  if (e.kind() == "input") {
    std::vector<util::Diagnostic> diags;
    const json& d = e.reply()["diagnostics"];
    if (d.is_array())
      for (const auto& x : d)
        diags.push_back(util::Diagnostic{x.value("file", ""), x.value("line", 0),
                                         x.value("col", 0), x.value("message", "")});
    if (diags.empty()) diags.push_back(util::Diagnostic{"worker", 0, 0, e.what()});
    throw util::InputError(std::move(diags));
  }
  throw util::EnvironmentError(e.what());
}

core::CaseResult result_of(const json& reply, const std::string& label) {
  try {
    return core::case_result_from_json(reply.at("result"));
  } catch (const std::exception& e) {
    throw Failure(Failure::Kind::protocol,
                  fmt::format("{} broke the protocol: its result is malformed ({})", label,
                              e.what()));
  }
}

}  // namespace

std::chrono::milliseconds case_timeout(const core::Case& c, double override_s) {
  // A torch.compile variant compiles before its warm-up: a minute a graph on two busy cores.
  const double compile_s = kernel::compiles(c.kernel) ? 600.0 : 0.0;
  const double s = override_s > 0 ? override_s
                                  : 60.0 + compile_s +
                                        3.0 * (c.measure.warmup_ms / 1000.0 + c.measure.time_budget_s);
  return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000));
}

Supervisor::Supervisor(Spawn spawn) : m_spawn(std::move(spawn)) {}
Supervisor::~Supervisor() = default;

Client& Supervisor::client() {
  if (!m_client || !m_client->alive()) {
    m_client.reset();
    m_client = std::make_unique<Client>(m_spawn);
    ++m_starts;
  }
  return *m_client;
}

void Supervisor::retire() {
  if (!m_client) return;
  for (auto& l : m_client->take_stderr()) m_stderr.push_back(std::move(l));
  m_client.reset();
}

std::vector<std::string> Supervisor::take_stderr() {
  if (m_client)
    for (auto& l : m_client->take_stderr()) m_stderr.push_back(std::move(l));
  std::vector<std::string> out;
  out.swap(m_stderr);
  return out;
}

const Described& Supervisor::described() {
  if (m_described) return *m_described;
  json reply;
  try {
    reply = client().call({{"op", "describe"}}, std::chrono::seconds(120));
  } catch (const RemoteError& e) {
    retire();
    rethrow_command_error(e);
  } catch (const Failure& f) {
    retire();
    std::string hint;
    if (!m_spawn.args.empty())
      hint =
          " (two plugins that register the same TORCH_LIBRARY namespace abort the process that "
          "loads both: give each version to its own worker, e.g. attnprof ab --base-arg=--plugin=a.so "
          "--head-arg=--plugin=b.so)";
    throw util::EnvironmentError(fmt::format("{} could not start: {}{}", m_spawn.executable,
                                             f.what(), hint));
  }
  try {
    Described d;
    d.env = env::description_from_json(reply.at("env"));
    d.kernels = reply.at("kernels").get<std::vector<std::string>>();
    for (const auto& p : reply.at("plugins"))
      d.plugins.push_back({p.at("path").get<std::string>(), p.at("ops").get<std::vector<std::string>>()});
    d.torch_dir = reply.value("torch_dir", "");
    d.python_kernels = reply.value("python_kernels", "");
    m_described = std::move(d);
  } catch (const std::exception& e) {
    retire();
    throw util::EnvironmentError(fmt::format(
        "{} broke the protocol: its description is malformed ({})", m_spawn.executable, e.what()));
  }
  return *m_described;
}

template <class F>
std::optional<core::CaseResult> Supervisor::guarded(const core::Case& c, F&& f) {
  try {
    json reply = f(client());
    // prepare and batch answer "ready" while the case goes on: no result yet.
    if (reply.value("ready", false)) return std::nullopt;
    core::CaseResult r = result_of(reply, m_spawn.label);
    // The worker exits after this reply so that the next case starts in a fresh process.
    if (reply.value("retire", false)) retire();
    if (reply.contains("restart")) {
      // The worker exits after this reply; its successor starts clean.
      r.message += fmt::format("{}{} restarted: {}", r.message.empty() ? "" : "; ",
                               m_spawn.label, reply.value("restart", ""));
      retire();
    }
    return r;
  } catch (const RemoteError& e) {
    if (e.kind() == "input" || e.kind() == "environment") rethrow_command_error(e);
    return error_result(c, fmt::format("{}: {}", m_spawn.label, e.what()));
  } catch (const Failure& f) {
    retire();
    std::string why = f.what();
    // A Python module that killed its worker: where in the user's file, from the stack the
    // worker wrote as it died.
    if (const std::string file = kernel::python_file(c.kernel, c.loc.file);
        kernel::is_python(c.kernel) && !file.empty())
      if (auto at = kernel::python_frame(m_stderr, file))
        why += "; the Python module's last frame: " + *at;
    return error_result(c, why);
  }
}

core::CaseResult Supervisor::run_case(const core::Case& c, bool trace,
                                      std::chrono::milliseconds timeout) {
  auto r = guarded(c, [&](Client& w) {
    return w.call({{"op", "run"}, {"case", core::to_json(c)}, {"trace", trace}}, timeout);
  });
  return r ? *r : error_result(c, fmt::format("{} answered run with \"ready\"", m_spawn.label));
}

std::optional<core::CaseResult> Supervisor::prepare(const core::Case& c,
                                                    std::chrono::milliseconds timeout) {
  m_current = c;
  return guarded(c, [&](Client& w) {
    return w.call({{"op", "prepare"}, {"case", core::to_json(c)}}, timeout);
  });
}

Supervisor::Batch Supervisor::batch(double batch_ns, int min_calls, int max_calls,
                                    std::chrono::milliseconds timeout) {
  Batch b;
  b.ended = guarded(m_current, [&](Client& w) {
    json reply = w.call(
        {{"op", "batch"}, {"ns", batch_ns}, {"min", min_calls}, {"max", max_calls}}, timeout);
    try {
      b.samples = samples_from_json(reply.at("samples"));
    } catch (const std::exception& e) {
      throw Failure(Failure::Kind::protocol,
                    fmt::format("{} broke the protocol: {}", m_spawn.label, e.what()));
    }
    return reply;
  });
  return b;
}

core::CaseResult Supervisor::finish(bool trace, std::chrono::milliseconds timeout) {
  auto r = guarded(m_current, [&](Client& w) {
    return w.call({{"op", "finish"}, {"trace", trace}}, timeout);
  });
  return r ? *r
           : error_result(m_current, fmt::format("{} answered finish with \"ready\"", m_spawn.label));
}

}  // namespace attnprof::worker
