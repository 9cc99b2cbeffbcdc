// The history's SQLite schema (schema.h): the tables of each version and the migration chain
// from every older version to this one.
#include "harness/store/schema.h"

namespace attnprof::store::schema {

namespace {

// v1: runs, environments, cases, every sample, summaries, cost-matrix rows.
constexpr const char* v1 = R"sql(
CREATE TABLE environments(
  fingerprint TEXT PRIMARY KEY,
  fields TEXT NOT NULL                       -- JSON object of the stable fields
);
CREATE TABLE runs(
  id TEXT PRIMARY KEY,
  git_commit TEXT NOT NULL DEFAULT '',
  git_branch TEXT NOT NULL DEFAULT '',
  started_ns INTEGER NOT NULL,
  ended_ns INTEGER NOT NULL,
  status TEXT NOT NULL,
  env_fingerprint TEXT NOT NULL REFERENCES environments(fingerprint)
);
CREATE INDEX runs_by_branch ON runs(git_branch, env_fingerprint, started_ns);
CREATE TABLE cases(
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  case_key TEXT NOT NULL,
  kernel TEXT NOT NULL,
  params TEXT NOT NULL,                      -- JSON of core::Case
  status TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  UNIQUE(run_id, case_key)
);
CREATE INDEX cases_by_key ON cases(case_key);
CREATE TABLE samples(
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  ns INTEGER NOT NULL,
  at_ns INTEGER NOT NULL,
  sm_clock_mhz REAL,
  dropped INTEGER NOT NULL,
  PRIMARY KEY(case_id, idx)
) WITHOUT ROWID;
CREATE TABLE summaries(
  case_id INTEGER PRIMARY KEY REFERENCES cases(id) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  median_ns REAL, mean_ns REAL, min_ns REAL, max_ns REAL, q1_ns REAL, q3_ns REAL,
  ci_low_ns REAL, ci_high_ns REAL, ci_level REAL, converged INTEGER NOT NULL
);
CREATE TABLE cost_rows(
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  op TEXT NOT NULL, input_shapes TEXT NOT NULL, parent TEXT NOT NULL,
  calls INTEGER NOT NULL,
  cpu_self_ns REAL, cpu_total_ns REAL, device_self_ns REAL, device_total_ns REAL, share REAL,
  bytes_allocated INTEGER NOT NULL,
  PRIMARY KEY(case_id, idx)
) WITHOUT ROWID;
)sql";

// v2: PR and CI links, the backend a case ran on, named metrics, the kernels under each cost
// row, gate verdicts and annotations (accepted regressions, baseline resets, ignores).
constexpr const char* v2 = R"sql(
ALTER TABLE runs ADD COLUMN pr TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN ci_url TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_time ON runs(started_ns);
ALTER TABLE cases ADD COLUMN backend TEXT NOT NULL DEFAULT '';
ALTER TABLE cases ADD COLUMN max_abs_error REAL;
ALTER TABLE cost_rows ADD COLUMN kernels TEXT NOT NULL DEFAULT '[]';
CREATE TABLE metrics(
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY(case_id, name)
) WITHOUT ROWID;
CREATE TABLE verdicts(
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  case_key TEXT NOT NULL,
  verdict TEXT NOT NULL,
  baseline TEXT NOT NULL DEFAULT '',
  ratio REAL, ci_low REAL, ci_high REAL, p_value REAL,
  detail TEXT NOT NULL DEFAULT '',
  created_ns INTEGER NOT NULL,
  UNIQUE(run_id, case_key, baseline)
);
CREATE TABLE annotations(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK(kind IN ('accept', 'reset', 'ignore')),
  case_glob TEXT NOT NULL DEFAULT '*',
  run_id TEXT NOT NULL DEFAULT '',           -- no foreign key: it may name a run in a shard
  git_branch TEXT NOT NULL DEFAULT '',
  env_fingerprint TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL CHECK(reason <> ''),
  author TEXT NOT NULL CHECK(author <> ''),
  created_ns INTEGER NOT NULL,
  UNIQUE(kind, case_glob, run_id, git_branch, env_fingerprint, reason, author, created_ns)
);
CREATE INDEX annotations_by_run ON annotations(run_id);
)sql";

// v3: A/B pairs. The two runs of one `attnprof ab` share a pair id and say which side they
// were; every round of the interleaved measurement is kept (each side's batch median), so a
// stored A/B can be judged again. Runs still being written have status 'incomplete'.
constexpr const char* v3 = R"sql(
ALTER TABLE runs ADD COLUMN pair_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN side TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_pair ON runs(pair_id) WHERE pair_id <> '';
CREATE TABLE ab_rounds(
  pair_id TEXT NOT NULL,
  case_key TEXT NOT NULL,
  round INTEGER NOT NULL,
  base_first INTEGER NOT NULL,
  base_ns REAL NOT NULL,                     -- median of the base side's batch
  head_ns REAL NOT NULL,
  base_n INTEGER NOT NULL,                   -- samples in each batch
  head_n INTEGER NOT NULL,
  at_ns INTEGER NOT NULL,
  PRIMARY KEY(pair_id, case_key, round)
) WITHOUT ROWID;
)sql";

// v4: indexes for history reads (history.cpp), which walk runs newest first and stop after N:
// by branch in time order (trend and history with --branch but no environment), and by commit
// (a --commits range resolves its ends by prefix). Indexes only.
constexpr const char* v4 = R"sql(
CREATE INDEX runs_by_branch_time ON runs(git_branch, started_ns);
CREATE INDEX runs_by_commit ON runs(git_commit);
)sql";

// v5: the rest of a cost row, so a stored run shows what the worker measured: kernel launches
// and memcpy/memset copies per call of the case (apart, as the cost matrix counts them), the
// input dtypes, the bytes freed, and each kernel's device time (a JSON array in the order of
// `kernels`). Rows stored before v5 read as 0 launches and copies: v4 kept no counts.
constexpr const char* v5 = R"sql(
ALTER TABLE cost_rows ADD COLUMN launches INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cost_rows ADD COLUMN copies INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cost_rows ADD COLUMN input_dtypes TEXT NOT NULL DEFAULT '';
ALTER TABLE cost_rows ADD COLUMN bytes_freed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cost_rows ADD COLUMN kernel_ns TEXT NOT NULL DEFAULT '[]';
)sql";

// v6: which pair of workers measured each A/B round. attnprof ab measures a case with several
// pairs of fresh workers, and its statistic has the pair as a level (gate/paired.h): every
// round of one pair shares that pair's bias. Rounds stored before v6 read as pass 0, one pair:
// what attnprof ab measured then, its confirmation pass aside, which it did not mark.
constexpr const char* v6 = R"sql(
ALTER TABLE ab_rounds ADD COLUMN pass INTEGER NOT NULL DEFAULT 0;
)sql";

// v7: what each sample saw of the worker being descheduled (core/stability.h): the process's CPU
// time over the call and its threads' involuntary context switches, so a stored run can say
// which of its cases a busy machine disturbed. NULL in samples stored before v7, and in GPU
// samples.
constexpr const char* v7 = R"sql(
ALTER TABLE samples ADD COLUMN cpu_ns INTEGER;
ALTER TABLE samples ADD COLUMN invol_switches INTEGER;
)sql";

// v8: what each case's output was checked against before it was timed (Case::reference):
// "sdpa.math", another kernel (the user's own module packaged in fp32), or "none", not checked,
// which every report then says. Before v8 every case that reached its check (ok or failed) was
// checked against sdpa.math (at the block or layer level, the harness's own with it); cases that
// ended before (skipped, an error) read as '', as they are written now.
constexpr const char* v8 = R"sql(
ALTER TABLE cases ADD COLUMN reference TEXT NOT NULL DEFAULT '';
UPDATE cases SET reference = 'sdpa.math' WHERE status IN ('ok', 'failed');
)sql";

// v9: the time each sample's threads spent runnable but waiting for a CPU (the scheduler's
// run_delay from /proc/self/task/*/schedstat): what core/stability.h judges descheduling by,
// since CPU time short of wall time is also what threads sleeping at a barrier show on a quiet
// machine. NULL before v9, in GPU samples, and where the kernel keeps no schedstat.
constexpr const char* v9 = R"sql(
ALTER TABLE samples ADD COLUMN wait_ns INTEGER;
)sql";

// v10: what each case ran (CaseResult::kernels): on a GPU the kernels its traced pass launched,
// on the CPU the ATen ops it called, as a sorted JSON array of names, so a comparison can say
// "kernels changed" beside its time verdict. NULL where it was not recorded: cases stored before
// v10 (unknown, never "changed"), and cases without a traced pass.
constexpr const char* v10 = R"sql(
ALTER TABLE cases ADD COLUMN kernels TEXT;
)sql";

// v11: each A/B batch's lower quartile beside its median. The paired gate judges the lower
// quartile (gate/paired.h): on a busy machine a batch's median flips between calls that ran
// alone and calls that shared a CPU. Rounds stored before v11 read as 0, not recorded, and are
// judged on their medians as before.
constexpr const char* v11 = R"sql(
ALTER TABLE ab_rounds ADD COLUMN base_q1_ns REAL NOT NULL DEFAULT 0;
ALTER TABLE ab_rounds ADD COLUMN head_q1_ns REAL NOT NULL DEFAULT 0;
)sql";

// v12: each A/B batch's median SM clock (core::AbRound): a GPU pair whose sides ran at different
// clocks says so beside its verdict. Rounds stored before v12, and CPU rounds, read as 0, not
// read.
constexpr const char* v12 = R"sql(
ALTER TABLE ab_rounds ADD COLUMN base_clock_mhz REAL NOT NULL DEFAULT 0;
ALTER TABLE ab_rounds ADD COLUMN head_clock_mhz REAL NOT NULL DEFAULT 0;
)sql";

constexpr Migration chain[] = {
    {1, "runs, environments, cases, samples, summaries, cost rows", v1},
    {2, "PR and CI links, backends, metrics, kernels per cost row, verdicts, annotations", v2},
    {3, "A/B pairs and their rounds", v3},
    {4, "indexes for history reads: runs by branch and time, runs by commit", v4},
    {5, "cost rows: launches, copies, input dtypes, bytes freed, device time per kernel", v5},
    {6, "A/B rounds: the pair of workers that measured each", v6},
    {7, "samples: CPU time and involuntary context switches (descheduling)", v7},
    {8, "cases: the reference each output was checked against (none: not checked)", v8},
    {9, "samples: time runnable but waiting for a CPU (descheduling)", v9},
    {10, "cases: the kernels (GPU) or ATen ops (CPU) each ran", v10},
    {11, "A/B rounds: each batch's lower quartile beside its median", v11},
    {12, "A/B rounds: each batch's median SM clock", v12},
};
static_assert(chain[std::size(chain) - 1].version == current_version);

}  // namespace

std::span<const Migration> migrations() {
  return chain;
}

}  // namespace attnprof::store::schema
