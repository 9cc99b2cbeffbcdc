// Diagnostics that name the spot ("path:line:col: message") and the process exit codes shared
// by every subcommand (docs/ARCHITECTURE.md, "Exit codes").
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace attnprof::util {

enum ExitCode : int {
  exit_pass = 0,
  exit_gate_failed = 1,  // regression, correctness failure, required case missing
  exit_bad_input = 2,    // bad input or usage; the message says where
  exit_environment = 3,  // no GPU where required, CUPTI error, database error
};

struct Diagnostic {
  std::string file;
  int line = 0;  // 1-based; 0 when the error is about the file as a whole
  int col = 0;
  std::string message;
  std::string to_string() const;  // "file:line:col: message" (or "file: message")
};

// Bad input: carries every diagnostic found, so users see all their mistakes at once.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diags);
  explicit InputError(Diagnostic d) : InputError(std::vector<Diagnostic>{std::move(d)}) {}
  const std::vector<Diagnostic>& diagnostics() const { return m_diags; }

 private:
  std::vector<Diagnostic> m_diags;
};

// The environment failed us (database, CUDA, CUPTI): exit 3.
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace attnprof::util
