// Progress of a run for the person watching it. On a terminal: one live status line, rewritten
// in place ("[3/16 19%] llama/prefill/... 4.1 s  ETA 52 s"), with each finished case printed
// above it. Elsewhere (CI logs, pipes): one plain line per finished case, no control
// characters. Lines are whole when written and stdout is flushed first, so a report on stdout
// and progress on stderr never interleave mid-line.
//
//   report::Progress p(cases.size());          // stderr; live when it is a terminal
//   for (case : cases) {
//     p.start(case.key);
//     ... run it ...
//     p.finish(case.key, "ok 1.23 ms");         // or "failed: ...", "skipped: ..."
//   }
//   p.done();                                  // clears the live line
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace attnprof::report {

class Progress {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic

  // live: rewrite a status line in place; by default when `out` is a terminal. width: of the
  // live line; by default the terminal's, else 120.
  explicit Progress(int total, std::FILE* out = stderr, int live = -1, int width = 0,
                    Clock clock = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void start(const std::string& key);
  // `outcome` is one line (newlines are folded): "ok 1.23 ms", "failed: max error 0.3 at ...".
  void finish(const std::string& key, const std::string& outcome);
  // A message that must not tear the live line (a warning while a case runs).
  void message(const std::string& line);
  // Clears the live line; finish() calls after this still print plain lines.
  void done();

  // "ETA 1 m 20 s" from the cases done so far; empty before the first case ends.
  std::string eta() const;
  int completed() const { return m_done; }

 private:
  void draw();
  void clear();
  void write(const std::string& text);

  int m_total, m_done = 0;
  std::FILE* m_out;
  bool m_live;
  int m_width;
  Clock m_clock;
  double m_started = 0, m_case_started = 0;
  std::string m_current;
  bool m_drawn = false;
};

// "950 ms", "42 s", "3 m 05 s", "1 h 02 m": how long something will take, for people.
std::string format_eta(double seconds);

}  // namespace attnprof::report
