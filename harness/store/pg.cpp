// What the PostgreSQL layer (pg.h) does the same with or without libpq: URLs and rows.
#include "harness/store/pg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace attnprof::store::pg {

const std::string& Rows::text(std::size_t row, std::size_t col) const {
  static const std::string none;
  const auto& v = rows.at(row).at(col);
  return v ? *v : none;
}

namespace {

// Where a keyword/value string's password value lies ("password = 'a b'" or "password=x"):
// [begin, end) of each, quotes included.
std::vector<std::pair<std::size_t, std::size_t>> keyword_passwords(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t at = s.find("password"); at != std::string::npos;
       at = s.find("password", at + 1)) {
    if (at > 0 && !std::isspace(static_cast<unsigned char>(s[at - 1]))) continue;
    std::size_t v = at + 8;
    while (v < s.size() && s[v] == ' ') ++v;
    if (v >= s.size() || s[v] != '=') continue;
    ++v;
    while (v < s.size() && s[v] == ' ') ++v;
    std::size_t end = v;
    if (end < s.size() && s[end] == '\'') {
      for (++end; end < s.size() && s[end] != '\''; ++end)
        if (s[end] == '\\') ++end;
      end = std::min(end + 1, s.size());
    } else {
      while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
    }
    out.emplace_back(v, end);
  }
  return out;
}

// Where a URL's passwords lie: the userinfo's (after its first ":") and a "password=" query
// parameter's.
std::vector<std::pair<std::size_t, std::size_t>> url_passwords(const std::string& url) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  const auto start = url.find("://") + 3;
  const auto path = url.find_first_of("/?", start);
  const auto at = url.rfind('@', path == std::string::npos ? url.size() : path);
  if (at != std::string::npos && at >= start) {
    const auto colon = url.find(':', start);
    if (colon != std::string::npos && colon < at) out.emplace_back(colon + 1, at);
  }
  for (auto q = url.find('?'); q != std::string::npos; q = url.find('&', q + 1)) {
    if (url.compare(q + 1, 9, "password=") != 0) continue;
    const auto end = url.find('&', q + 1);
    out.emplace_back(q + 10, end == std::string::npos ? url.size() : end);
  }
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> passwords(const std::string& conninfo) {
  return conninfo.find("://") == std::string::npos ? keyword_passwords(conninfo)
                                                   : url_passwords(conninfo);
}

}  // namespace

std::string masked(const std::string& conninfo) {
  auto spans = passwords(conninfo);
  std::sort(spans.begin(), spans.end());
  std::string out;
  std::size_t from = 0;
  for (const auto& [b, e] : spans) {
    if (b < from) continue;
    out += conninfo.substr(from, b - from) + "***";
    from = e;
  }
  return out + conninfo.substr(from);
}

std::string redacted(std::string message, const std::string& conninfo) {
  // libpq quotes the string it could not parse whole ("invalid IPv6 host address in URI:
  // \"postgresql://ci:PW@[::1/fleet\""): that becomes the masked form first; then any password
  // left, wherever it is, and however short (a garbled message is better than a leaked one).
  for (auto at = message.find(conninfo); !conninfo.empty() && at != std::string::npos;
       at = message.find(conninfo, at + 1))
    message.replace(at, conninfo.size(), masked(conninfo));
  for (const auto& [b, e] : passwords(conninfo)) {
    std::string secret = conninfo.substr(b, e - b);
    if (secret.size() >= 2 && secret.front() == '\'' && secret.back() == '\'')
      secret = secret.substr(1, secret.size() - 2);
    if (secret.empty() || secret == "***") continue;
    for (auto at = message.find(secret); at != std::string::npos; at = message.find(secret, at + 3))
      message.replace(at, secret.size(), "***");
  }
  return message;
}

void check_url(const std::string& url, const std::string& option) {
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) return;
  throw util::InputError(util::Diagnostic{
      option, 0, 0,
      fmt::format("\"{}\" is not a PostgreSQL URL (postgresql://[user@]host[:port]/dbname)",
                  masked(url))});
}

}  // namespace attnprof::store::pg
