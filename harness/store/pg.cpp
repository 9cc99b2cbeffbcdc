// What the PostgreSQL layer (pg.h) does the same with or without libpq: URLs and rows.
#include "harness/store/pg.h"

#include <fmt/format.h>

namespace attnprof::store::pg {

const std::string& Rows::text(std::size_t row, std::size_t col) const {
  static const std::string none;
  const auto& v = rows.at(row).at(col);
  return v ? *v : none;
}

std::string masked(const std::string& url) {
  // The userinfo is what lies between "://" and the first "@" before the path; a password is
  // what follows its first ":".
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const auto start = scheme + 3;
  const auto path = url.find_first_of("/?", start);
  const auto at = url.rfind('@', path == std::string::npos ? url.size() : path);
  if (at == std::string::npos || at < start) return url;
  const auto colon = url.find(':', start);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

void check_url(const std::string& url, const std::string& option) {
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) return;
  throw util::InputError(util::Diagnostic{
      option, 0, 0,
      fmt::format("\"{}\" is not a PostgreSQL URL (postgresql://[user@]host[:port]/dbname)",
                  masked(url))});
}

}  // namespace attnprof::store::pg
