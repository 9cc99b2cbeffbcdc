// attnprof's end of the worker protocol (client.h): start an attnprof-worker, speak to it over
// pipes, and turn its death, silence or a broken reply into a Failure.
#include "harness/worker/client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>

#include "harness/util/error.h"
#include "harness/util/machine.h"
#include "harness/worker/protocol.h"

namespace attnprof::worker {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t stderr_tail_lines = 8;

bool is_executable_file(const std::string& p) {
  struct stat st{};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

bool is_dir(const std::string& p) {
  struct stat st{};
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string resolve_worker(const std::string& path, const std::string& option) {
  if (is_dir(path)) {
    const std::string inside = path + (path.ends_with('/') ? "" : "/") + "attnprof-worker";
    if (is_executable_file(inside)) return inside;
    throw util::InputError(util::Diagnostic{
        option, 0, 0,
        fmt::format("{}: this folder holds no attnprof-worker executable (build it: cmake "
                    "--build {} --target attnprof-worker)",
                    path, path)});
  }
  if (is_executable_file(path)) return path;
  throw util::InputError(util::Diagnostic{
      option, 0, 0,
      fmt::format("{}: {}", path,
                  access(path.c_str(), F_OK) == 0
                      ? "not an executable file (give attnprof-worker or its build folder)"
                      : "no such file or folder (give attnprof-worker or its build folder)")});
}

std::string default_worker() {
  if (const char* env = std::getenv("ATTNPROF_WORKER"); env && *env)
    return resolve_worker(env, "$ATTNPROF_WORKER");
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw util::EnvironmentError("cannot find this executable (/proc/self/exe)");
  self[n] = 0;
  std::string dir(self);
  dir = dir.substr(0, dir.rfind('/'));
  const std::string worker = dir + "/attnprof-worker";
  if (!is_executable_file(worker))
    throw util::EnvironmentError(fmt::format(
        "{}: missing; attnprof runs kernels in attnprof-worker, built beside it (cmake --build "
        "<build> --target attnprof-worker), or named by $ATTNPROF_WORKER",
        worker));
  return worker;
}

std::vector<std::pair<std::string, std::string>> env_settings(
    const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a.starts_with("--env=")) a.remove_prefix(6);
    else if (a == "--env" && i + 1 < args.size()) a = args[++i];
    else continue;
    const auto eq = a.find('=');
    if (eq != std::string_view::npos && eq > 0)
      out.emplace_back(std::string(a.substr(0, eq)), std::string(a.substr(eq + 1)));
  }
  return out;
}

Client::Client(Spawn spawn, std::chrono::milliseconds start_timeout) : m_spawn(std::move(spawn)) {
  // A worker that dies while we write to it must become a Failure, not kill us with SIGPIPE.
  static const bool sigpipe_ignored = [] {
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)sigpipe_ignored;

  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    throw util::EnvironmentError(fmt::format("cannot start {}: pipe: {}", m_spawn.executable,
                                             std::strerror(errno)));
  std::vector<std::string> argv_s = {m_spawn.executable};
  argv_s.insert(argv_s.end(), m_spawn.args.begin(), m_spawn.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto env = env_settings(m_spawn.args);  // read before fork: the child only sets them
  const pid_t parent = getpid();

  m_pid = fork();
  if (m_pid < 0)
    throw util::EnvironmentError(
        fmt::format("cannot start {}: fork: {}", m_spawn.executable, std::strerror(errno)));
  if (m_pid == 0) {
    // The worker must not outlive us: a parent killed by CI's timeout leaves no orphan
    // holding the GPU.
    util::die_with_parent(parent, 127);
    // Its own process group: a hung worker is killed with whatever it started.
    setpgid(0, 0);
    // --env NAME=VALUE is set here, before exec, as well as by the worker: libraries such as
    // OpenMP read their variables when they load, before the worker's main runs.
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execv(m_spawn.executable.c_str(), argv.data());
    const std::string msg =
        fmt::format("cannot execute {}: {}\n", m_spawn.executable, std::strerror(errno));
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  m_in = in[1];
  m_out = out[0];
  m_err = err[0];

  std::optional<std::string> line;
  try {
    line = read_line(Clock::now() + start_timeout);
  } catch (const Failure& f) {
    throw util::EnvironmentError(fmt::format("{} failed to start: {}", m_spawn.executable,
                                             f.what()));
  }
  if (auto why = check_hello(*line, m_spawn.executable); !why.empty()) {
    kill();
    throw util::EnvironmentError(why);
  }
}

Client::~Client() {
  if (m_pid > 0) {
    // Ask politely (it may be holding a GPU context that is cheaper to tear down cleanly), then
    // make sure.
    const std::string quit = encode({{"id", 0}, {"op", "quit"}}) + "\n";
    (void)!::write(m_in, quit.data(), quit.size());
    close_fd(m_in);
    for (int i = 0; i < 200; ++i) {
      int status = 0;
      if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
        m_pid = -1;
        break;
      }
      usleep(10'000);
    }
    if (m_pid > 0) kill();
  }
  close_fd(m_in);
  close_fd(m_out);
  close_fd(m_err);
}

void Client::kill() {
  if (m_pid > 0) {
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL);
    int status = 0;
    waitpid(m_pid, &status, 0);
    m_pid = -1;
  }
  close_fd(m_in);
}

std::string Client::exit_description() {
  if (m_pid <= 0) return "exited";
  int status = 0;
  // Its stdout closed: it is exiting. Give it a moment, then make sure.
  pid_t got = 0;
  for (int i = 0; i < 300 && got == 0; ++i) {
    got = waitpid(m_pid, &status, WNOHANG);
    if (got == 0) usleep(10'000);
  }
  if (got == 0) {
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL);
    waitpid(m_pid, &status, 0);
    m_pid = -1;
    return "closed its output and was killed";
  }
  m_pid = -1;
  if (WIFSIGNALED(status))
    return fmt::format("signal {} ({})", WTERMSIG(status), signal_name(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

void Client::die(Failure::Kind kind, const std::string& what) {
  if (kind != Failure::Kind::died) kill();
  drain_stderr(true);
  std::string msg = what;
  // The worker's own last words usually say why (a c10 error, a plugin's message).
  if (kind == Failure::Kind::died && !m_err_tail.empty())
    msg += fmt::format("; its last output: \"{}\"", m_err_tail.back());
  close_fd(m_in);
  close_fd(m_out);
  close_fd(m_err);
  throw Failure(kind, msg);
}

void Client::drain_stderr(bool until_eof) {
  if (m_err < 0) return;
  char buf[4096];
  // Until end of file, but never long: a process the worker started may still hold the pipe.
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{m_err, POLLIN, 0};
    if (poll(&p, 1, until_eof ? static_cast<int>(std::max<std::int64_t>(left, 0)) : 0) <= 0)
      break;
    const ssize_t n = ::read(m_err, buf, sizeof buf);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      if (!m_err_buf.empty()) {
        m_err_lines.push_back(m_err_buf);
        m_err_tail.push_back(m_err_buf);
        m_err_buf.clear();
      }
      close_fd(m_err);
      break;
    }
    m_err_buf.append(buf, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = m_err_buf.find('\n')) != std::string::npos) {
      std::string l = m_err_buf.substr(0, nl);
      m_err_buf.erase(0, nl + 1);
      if (l.empty()) continue;
      m_err_lines.push_back(l);
      m_err_tail.push_back(l);
      if (m_err_tail.size() > stderr_tail_lines) m_err_tail.pop_front();
    }
  }
}

std::optional<std::string> Client::read_line(Clock::time_point deadline) {
  char buf[65536];
  while (true) {
    if (auto nl = m_out_buf.find('\n'); nl != std::string::npos) {
      std::string line = m_out_buf.substr(0, nl);
      m_out_buf.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      die(Failure::Kind::hung,
          fmt::format("{} hung: no answer in time; killed", m_spawn.label));
    pollfd fds[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
    const int n = poll(fds, m_err >= 0 ? 2 : 1,
                       static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    if (n < 0) {
      if (errno == EINTR) continue;
      die(Failure::Kind::protocol, fmt::format("poll: {}", std::strerror(errno)));
    }
    if (m_err >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) drain_stderr(false);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t got = ::read(m_out, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) die(Failure::Kind::died, fmt::format("{} died, {}", m_spawn.label,
                                                         exit_description()));
      m_out_buf.append(buf, static_cast<std::size_t>(got));
    }
  }
}

json Client::call(json request, std::chrono::milliseconds timeout) {
  if (m_pid <= 0 || m_in < 0)
    throw Failure(Failure::Kind::died, fmt::format("{} is not running", m_spawn.label));
  const std::int64_t id = m_next_id++;
  request["id"] = id;
  const std::string line = encode(request) + "\n";
  std::size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = ::write(m_in, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die(Failure::Kind::died, fmt::format("{} died, {}", m_spawn.label,
                                                     exit_description()));
    off += static_cast<std::size_t>(n);
  }
  const auto deadline = Clock::now() + timeout;
  const std::optional<std::string> reply_line = read_line(deadline);
  std::string why;
  auto reply = decode(*reply_line, &why);
  const std::string shown =
      reply_line->size() > 120 ? reply_line->substr(0, 120) + "..." : *reply_line;
  if (!reply)
    die(Failure::Kind::protocol,
        fmt::format("{} broke the protocol: its reply is {}: \"{}\"", m_spawn.label, why, shown));
  const json& rid = (*reply)["id"];
  if (!rid.is_number_integer() || rid.get<std::int64_t>() != id)
    die(Failure::Kind::protocol,
        fmt::format("{} broke the protocol: reply to request {} has id {}", m_spawn.label, id,
                    rid.dump()));
  const json& ok = (*reply)["ok"];
  if (!ok.is_boolean())
    die(Failure::Kind::protocol,
        fmt::format("{} broke the protocol: reply without \"ok\": \"{}\"", m_spawn.label, shown));
  if (!ok.get<bool>())
    throw RemoteError(reply->value("kind", "internal"), reply->value("error", "unknown error"),
                      *reply);
  return std::move(*reply);
}

std::vector<std::string> Client::take_stderr() {
  drain_stderr(false);
  std::vector<std::string> out;
  out.swap(m_err_lines);
  return out;
}

}  // namespace attnprof::worker
