// The live progress line of a run on a terminal, or one plain line per case elsewhere
// (progress.h).
#include "harness/report/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

#include "harness/report/format.h"

namespace attnprof::report {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string format_eta(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 1) return fmt::format("{:.0f} ms", s * 1000);
  if (s < 60) return fmt::format("{:.0f} s", s);
  const long t = std::lround(s);
  if (t < 3600) return fmt::format("{} m {:02} s", t / 60, t % 60);
  return fmt::format("{} h {:02} m", t / 3600, (t % 3600) / 60);
}

Progress::Progress(int total, std::FILE* out, int live, int width, Clock clock)
    : m_total(total),
      m_out(out),
      m_live(live < 0 ? isatty(fileno(out)) != 0 : live != 0),
      m_width(width > 0 ? width
                        : static_cast<int>(m_live ? console_width(fileno(out)) : kConsoleWidth)),
      m_clock(clock ? std::move(clock) : Clock(steady_seconds)) {
  m_started = m_clock();
}

Progress::~Progress() {
  done();
}

std::string Progress::eta() const {
  if (m_done == 0) return "";
  const double per_case = (m_clock() - m_started) / m_done;
  return "ETA " + format_eta(per_case * (m_total - m_done));
}

void Progress::write(const std::string& text) {
  std::fflush(stdout);  // whatever the report printed so far lands before this line
  std::fputs(text.c_str(), m_out);
  std::fflush(m_out);
}

void Progress::clear() {
  if (m_drawn) write("\r\033[K");
  m_drawn = false;
}

void Progress::draw() {
  if (!m_live || m_current.empty()) return;
  const int pct = m_total > 0 ? 100 * m_done / m_total : 0;
  const std::string left = fmt::format("[{}/{} {}%] ", m_done, m_total, pct);
  std::string right = fmt::format("  {}", format_eta(m_clock() - m_case_started));
  if (!eta().empty()) right += "  " + eta();
  // The key gives way first (its head is cut: the kernel and shape are at its end), then the
  // timings.
  int room = m_width - 1 - static_cast<int>(display_width(left) + display_width(right));
  if (room < 16) {
    right.clear();
    room = m_width - 1 - static_cast<int>(display_width(left));
  }
  const std::size_t cap = static_cast<std::size_t>(std::max(room, 8));
  std::string key = one_line(m_current, 0);
  if (key.size() > cap) key = "…" + key.substr(key.size() - (cap - 1));
  write("\r\033[K" + left + key + right);
  m_drawn = true;
}

void Progress::start(const std::string& key) {
  m_current = key;
  m_case_started = m_clock();
  draw();
}

void Progress::finish(const std::string& key, const std::string& outcome) {
  ++m_done;
  clear();
  write(fmt::format("[{}/{}] {}: {}\n", m_done, m_total, one_line(key, 0), one_line(outcome)));
  m_current.clear();
}

void Progress::message(const std::string& line) {
  clear();
  write(line + (line.empty() || line.back() != '\n' ? "\n" : ""));
  draw();
}

void Progress::done() {
  clear();
  m_current.clear();
}

}  // namespace attnprof::report
