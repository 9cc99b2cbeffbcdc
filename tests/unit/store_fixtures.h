// Shared by the store's unit tests (test_database.cpp, test_history.cpp, ...): a temporary
// folder removed at scope exit, and runs with known contents.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/store/database.h"

namespace attnprof::testing {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "attnprof-store-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Changes the last character of run `id` in its row of table runs, and nowhere else: the id
// index (and the cases' run_id) still hold the old id, the way a flipped byte leaves them.
// The file must be in rollback-journal mode, its runs table on one page (a few runs).
inline void damage_run_row_id(const std::string& path, const std::string& id) {
  sqlite3* raw = nullptr;
  sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(raw,
                     "SELECT (SELECT page_size FROM pragma_page_size), rootpage FROM sqlite_master "
                     "WHERE name = 'runs'",
                     -1, &st, nullptr);
  sqlite3_step(st);
  const auto page = static_cast<std::size_t>(sqlite3_column_int64(st, 0));
  const auto root = static_cast<std::size_t>(sqlite3_column_int64(st, 1));
  sqlite3_finalize(st);
  sqlite3_close(raw);
  std::string bytes = read_bytes(path);
  const std::size_t at = bytes.find(id, (root - 1) * page);
  if (at == std::string::npos || at >= root * page) throw std::runtime_error("id not on its page");
  char& last = bytes[at + id.size() - 1];
  last = last == 'a' ? 'b' : 'a';
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

inline core::Environment cpu_env(const std::string& model = "Test CPU") {
  core::Environment e;
  e.fields = {{"cpu.model", model}, {"device.name", "cpu"}, {"cpu.threads", "4"}};
  return e;
}

// A run of `cases` cases with `samples` samples each; case i's samples are base + i + j % 7.
inline core::Run make_run(const std::string& commit, std::int64_t started_ns, int cases = 2,
                          int samples = 5, double base = 1000, const std::string& branch = "main") {
  core::Run run;
  run.git_commit = commit;
  run.git_branch = branch;
  run.started_ns = started_ns;
  run.ended_ns = started_ns + 1000;
  run.env = cpu_env();
  for (int i = 0; i < cases; ++i) {
    core::CaseResult cr;
    cr.spec.key = "m/prefill/b1-s" + std::to_string(128 << i) + "-fp32-none/cpu.naive";
    cr.spec.kernel = "cpu.naive";
    cr.spec.suite = "m";
    cr.spec.q_len = cr.spec.kv_len = 128 << i;
    for (int j = 0; j < samples; ++j)
      cr.samples.push_back({static_cast<std::int64_t>(base) + i + j % 7, started_ns + j,
                            j % 2 ? std::optional<double>(1980.5) : std::nullopt, j == 3});
    cr.summary.n = samples;
    cr.summary.median_ns = base + i;
    cr.summary.mean_ns = base + i + 0.5;
    cr.summary.min_ns = base + i - 1;
    cr.metrics["throughput.tflops"] = 1.5 + i;
    core::CostRow row;
    row.op = "aten::bmm";
    row.calls = 2;
    row.cpu_self_ns = 700;
    row.kernels = {{"gemm_kernel", 2}};
    cr.cost.push_back(row);
    core::CostRow row2;
    row2.op = "aten::softmax";
    row2.calls = 1;
    row2.cpu_self_ns = 300;
    row2.share = 0.3;
    cr.cost.push_back(row2);
    run.cases.push_back(cr);
  }
  return run;
}

// The two runs of an A/B pair (one case each) and `rounds` rounds of it, base_ns 100 + i and
// head_ns 110 + i (their lower quartiles 90 + i and 99 + i), base first in even rounds.
struct PairFixture {
  core::Run base, head;
  std::vector<core::AbRound> rounds;
};
inline PairFixture make_ab_pair(const std::string& pair_id, std::int64_t started_ns, int rounds = 3) {
  PairFixture p{make_run("base", started_ns, 1, 5), make_run("head", started_ns + 1, 1, 5), {}};
  p.base.pair_id = p.head.pair_id = pair_id;
  p.base.side = "base";
  p.head.side = "head";
  for (int i = 0; i < rounds; ++i)
    p.rounds.push_back({p.base.cases[0].spec.key, i, i % 2 == 0, 100.0 + i, 110.0 + i, 4, 4, i,
                        0, 90.0 + i, 99.0 + i});
  return p;
}

}  // namespace attnprof::testing
