// The PostgreSQL layer (pg.h) of an attnprof built without libpq: opening a server says so,
// with what to install; nothing else can be reached without a connection.
#include <fmt/format.h>

#include "harness/store/pg.h"

namespace attnprof::store::pg {

bool available() {
  return false;
}

Connection Connection::open(const std::string& url) {
  throw Error(fmt::format("{}: this attnprof was built without PostgreSQL (libpq was not found "
                          "at build time): install libpq-dev and rebuild",
                          masked(url)),
              "");
}

Settings settings(const std::string& url) {
  Connection::open(url);  // says why there are none
  return {};
}

Connection::~Connection() = default;

Rows Connection::exec(std::string_view, const std::vector<Param>&) {
  throw Error(fmt::format("{}: this attnprof was built without PostgreSQL", m_name), "");
}

}  // namespace attnprof::store::pg
