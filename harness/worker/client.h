// attnprof's end of the worker protocol (protocol.h): starts an attnprof-worker process, speaks
// to it over pipes, and turns every way a worker can go wrong into a Failure the caller can
// act on: it died (exit status or signal, with the last lines of its stderr), it did not answer
// within the deadline (it is killed), or it broke the protocol. Nothing here knows LibTorch.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attnprof::worker {

struct Spawn {
  std::string executable;         // path of attnprof-worker (resolve_worker)
  std::vector<std::string> args;  // given to it: --threads 1, --plugin lib.so, ...
  std::string label = "worker";   // in messages: "worker", "base", "head"
};

// The environment settings a worker's arguments carry (--env=NAME=VALUE or --env NAME=VALUE),
// as {NAME, VALUE}, in order; entries without a name are left out.
std::vector<std::pair<std::string, std::string>> env_settings(
    const std::vector<std::string>& args);

// An executable, or a build folder holding attnprof-worker. util::InputError naming `option`
// when it is neither.
std::string resolve_worker(const std::string& path, const std::string& option);
// attnprof-worker beside this attnprof executable (both are built into one folder), or
// $ATTNPROF_WORKER when set.
std::string default_worker();

// The worker is gone or unusable; the case it was working on ends with `what()` as its error.
class Failure : public std::runtime_error {
 public:
  enum class Kind { died, hung, protocol };
  Failure(Kind kind, const std::string& what) : std::runtime_error(what), m_kind(kind) {}
  Kind kind() const { return m_kind; }

 private:
  Kind m_kind;
};

// The worker answered ok:false: the request failed there, the worker itself is fine.
class RemoteError : public std::runtime_error {
 public:
  RemoteError(std::string kind, const std::string& what, nlohmann::json reply)
      : std::runtime_error(what), m_kind(std::move(kind)), m_reply(std::move(reply)) {}
  const std::string& kind() const { return m_kind; }  // "input", "environment", "internal"
  const nlohmann::json& reply() const { return m_reply; }

 private:
  std::string m_kind;
  nlohmann::json m_reply;
};

class Client {
 public:
  // Starts the worker and reads its hello. util::EnvironmentError (exit 3) when it cannot be
  // started, dies during start-up (its stderr says why: a plugin that failed to load, say), or
  // speaks another protocol version (both named).
  explicit Client(Spawn spawn,
                  std::chrono::milliseconds start_timeout = std::chrono::seconds(120));
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `request` (an "id" is added) and waits for its reply. Failure when the worker dies,
  // does not answer within `timeout` (it is then killed), or answers something malformed; after
  // a Failure this client is dead and every further call throws. RemoteError for ok:false.
  nlohmann::json call(nlohmann::json request, std::chrono::milliseconds timeout);

  // Lines the worker wrote to stderr since the last call, to show after the current line of
  // output rather than in the middle of it.
  std::vector<std::string> take_stderr();

  bool alive() const { return m_pid > 0; }
  pid_t pid() const { return m_pid; }
  const Spawn& spawn() const { return m_spawn; }

  // Kills the worker now (SIGKILL) and reaps it.
  void kill();

 private:
  // Reads until a full stdout line is there or the deadline passes; stderr is collected meanwhile.
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline);
  [[noreturn]] void die(Failure::Kind kind, const std::string& what);
  std::string exit_description();  // reaps the worker: "exited with status 3", "signal 11 (SIGSEGV)"
  void drain_stderr(bool until_eof);

  Spawn m_spawn;
  pid_t m_pid = -1;
  int m_in = -1;   // we write requests
  int m_out = -1;  // we read replies
  int m_err = -1;  // we read its stderr
  std::string m_out_buf, m_err_buf;
  std::vector<std::string> m_err_lines;  // not yet taken
  std::deque<std::string> m_err_tail;    // the last few, for a death's message
  std::int64_t m_next_id = 1;
};

}  // namespace attnprof::worker
