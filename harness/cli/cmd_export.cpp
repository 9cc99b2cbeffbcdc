// attnprof export: history as JSON lines (store/portable.h), to move it between machines; from a
// damaged history, what is readable (exit 3, naming each run left out). Or, with --format, the
// results in a format another tool reads (report/exports.h): one run for Bencher,
// github-action-benchmark and PyTorch's database, a series of runs for Apache Otava.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/report/exports.h"
#include "harness/store/history.h"
#include "harness/store/portable.h"
#include "harness/util/error.h"

namespace attnprof::cli {

namespace {

void write_file(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path);
  if (!out || !(out << text))
    throw util::EnvironmentError(fmt::format("{}: cannot write {}", path, what));
}

// The one run a one-run format writes: --run's, else the newest complete run the filters take.
core::Run pick_run(store::Database& db, const std::string& ref, store::RunFilter filter) {
  if (!ref.empty()) {
    auto run = db.load_run(ref);
    if (!run)
      throw util::InputError(util::Diagnostic{"--run", 0, 0, fmt::format("no run {}", ref)});
    return *run;
  }
  filter.complete_only = true;
  const auto runs = db.list_runs(filter);
  if (runs.empty())
    throw util::InputError(util::Diagnostic{
        "--format", 0, 0, "no complete run matches the filters: a one-run format needs one"});
  return db.load_listed_run(runs.back().id);
}

}  // namespace

Action setup_export(CLI::App& sub) {
  struct Opts {
    std::string db, output = "-", format = "jsonl", run, otava_config;
    HistoryFilterText filter;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_option("-o,--output", o->output, "File to write (default: stdout)");
  sub.add_option("--format", o->format,
                 "jsonl (the history, default), bmf (Bencher), gab (github-action-benchmark's "
                 "customSmallerIsBetter), otava (Apache Otava's CSV) or pytorch (PyTorch's OSS "
                 "benchmark database)");
  sub.add_option("--run", o->run,
                 "bmf, gab, pytorch: this run (id, prefix or latest; default: the newest "
                 "complete run the filters take)");
  sub.add_option("--case", o->filter.case_glob, "otava: the cases, a glob (default: every case)")
      ->check(glob_check());
  sub.add_option("--otava-config", o->otava_config,
                 "otava: also write Otava's configuration, a test reading --output, here");
  add_run_filters(sub, o->filter);  // the same --branch, --since, --until, --env as history
  return [o] {
    const auto format = report::parse_export_format(o->format);
    if (!format)
      throw util::InputError(util::Diagnostic{
          "--format", 0, 0,
          fmt::format("unknown format \"{}\" (want {})", o->format, report::kExportFormats)});
    const auto used = [&](bool given, const char* flag, const char* formats) {
      if (given)
        throw util::InputError(util::Diagnostic{
            flag, 0, 0, fmt::format("applies to --format {} only, not {}", formats, o->format)});
    };
    used(!o->run.empty() && !report::holds_one_run(*format), "--run", "bmf, gab or pytorch");
    used(*format != report::ExportFormat::otava && !o->filter.case_glob.empty(), "--case", "otava");
    used(*format != report::ExportFormat::otava && !o->otava_config.empty(), "--otava-config",
         "otava");
    if (!o->otava_config.empty() && o->output == "-")
      throw util::InputError(util::Diagnostic{
          "--otava-config", 0, 0, "names the CSV file Otava reads: give it with --output"});
    auto db = open_history(o->db, store::Database::Mode::read_only);
    const auto emit = [&](const std::string& text) {
      if (o->output == "-")
        fmt::print("{}", text);
      else
        write_file(o->output, text, "the export");
    };
    if (report::holds_one_run(*format)) {
      const core::Run run = pick_run(db, o->run, to_run_filter(o->filter));
      emit(*format == report::ExportFormat::bmf   ? report::to_bmf(run)
           : *format == report::ExportFormat::gab ? report::to_gab(run)
                                                  : report::to_pytorch(run));
      fmt::print(stderr, "exported run {} ({} cases) as {}\n", run.id, run.cases.size(), o->format);
      return 0;
    }
    if (*format == report::ExportFormat::otava) {
      const auto series = report::to_otava(store::history(db, to_filter(o->filter)));
      emit(series.csv);
      if (!o->otava_config.empty())
        write_file(o->otava_config, report::otava_config("attnprof", o->output, series.cases),
                   "Otava's configuration");
      fmt::print(stderr, "exported {} runs of {} cases as otava\n", series.runs,
                 series.cases.size());
      for (const auto& key : series.left_out)
        fmt::print(stderr,
                   "attnprof: left out {}: not in every run, and Otava's CSV has no "
                   "empty cells\n",
                   key);
      return 0;
    }
    store::PortableStats s;
    if (o->output == "-") {
      s = store::export_jsonl(db, std::cout, to_run_filter(o->filter));
    } else {
      std::ofstream out(o->output);
      if (!out) throw util::EnvironmentError(fmt::format("{}: cannot write the export", o->output));
      s = store::export_jsonl(db, out, to_run_filter(o->filter));
    }
    fmt::print(stderr, "exported {} runs, {} annotations, {} A/B pairs' rounds\n", s.runs,
               s.annotations, s.ab_pairs);
    if (s.unreadable.empty()) return 0;
    // What could be read is written; the exit code says the history is not whole.
    fmt::print(stderr, "attnprof: left out {} run(s) that cannot be read:\n", s.unreadable.size());
    for (const auto& why : s.unreadable) fmt::print(stderr, "  {}\n", why);
    return static_cast<int>(util::exit_environment);
  };
}

}  // namespace attnprof::cli
