// libFuzzer target for the store's readers (ci/fuzz-store.sh builds and runs it): each input is
// a history file (or, when it starts with "{", a JSON-lines export) and goes through what the
// commands do with one: open read-only and read-write, list, load every run, annotations,
// verdicts, A/B rounds, history, export, check --full, prune --dry-run, merge into a new file,
// and import. A refusal (util::EnvironmentError, util::InputError) is the expected answer to
// damage; anything else (another exception, a crash, a sanitizer report) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/store/database.h"
#include "harness/store/history.h"
#include "harness/store/portable.h"
#include "harness/util/error.h"

using namespace attnprof;
using store::Database;

namespace {

// One folder per process for the files an input becomes.
const std::filesystem::path& folder() {
  static const std::filesystem::path dir = [] {
    std::string t = (std::filesystem::temp_directory_path() / "attnprof-fuzz-XXXXXX").string();
    if (!mkdtemp(t.data())) std::abort();
    return std::filesystem::path(t);
  }();
  return dir;
}

void clear(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

// Runs fn; a refusal is an answer, any other exception escapes to libFuzzer as a finding.
template <class Fn>
void attempt(Fn&& fn) {
  try {
    fn();
  } catch (const util::EnvironmentError&) {
  } catch (const util::InputError&) {
  }
}

void read_everything(const std::string& path) {
  attempt([&] {
    auto db = Database::open(path, Database::Mode::read_only);
    for (const auto& info : db.list_runs()) {
      attempt([&] { db.load_run(info.id); });
      attempt([&] { db.verdicts(info.id); });
      if (!info.pair_id.empty()) attempt([&] { db.rounds(info.pair_id); });
      if (!info.id.empty()) attempt([&] { db.find_run(info.id.substr(0, 4)); });
    }
    attempt([&] { db.load_run("latest"); });
    attempt([&] { db.annotations(); });
    attempt([&] { store::history(db, {}); });
    attempt([&] {
      std::ostringstream out;
      store::export_jsonl(db, out);
    });
    attempt([&] { db.check(Database::Check::full); });
  });
  attempt([&] {
    auto db = Database::open(path);
    db.prune({.keep_last = 1, .dry_run = true});
  });
  const std::string merged = (folder() / "merged.db").string();
  attempt([&] { Database::open(merged).merge_from(path); });
  clear(merged);
}

void import(const std::string& text) {
  const std::string path = (folder() / "imported.db").string();
  attempt([&] {
    auto db = Database::open(path);
    std::istringstream in(text);
    store::import_jsonl(db, in, "input.jsonl");
  });
  clear(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!bytes.empty() && bytes[0] == '{') {
    import(bytes);
    return 0;
  }
  const std::string path = (folder() / "input.db").string();
  clear(path);
  std::ofstream(path, std::ios::binary) << bytes;
  read_everything(path);
  clear(path);
  return 0;
}
