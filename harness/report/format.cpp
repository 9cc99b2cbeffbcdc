// How wide the console is, and text escaped for XML and HTML (format.h).
#include "harness/report/format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace attnprof::report {

std::size_t console_width(int fd) {
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    char* end = nullptr;
    const long n = std::strtol(c, &end, 10);
    if (*end == '\0' && n >= 40) return static_cast<std::size_t>(n);
  }
  winsize ws{};
  if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return kConsoleWidth;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        // XML 1.0 has no way to write most control characters: drop them.
        if (c >= 0x20 || c == '\n' || c == '\t') o += static_cast<char>(c);
    }
  }
  return o;
}

}  // namespace attnprof::report
