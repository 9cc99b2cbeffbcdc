// attnprof changes: change points in each case's history on a branch and environment (E-divisive
// means + permutation test, confirmed by a Welch t-test), with the commit range of each change.
#include <fmt/format.h>

#include <memory>

#include "harness/cli/bounds.h"
#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/store/changes.h"
#include "harness/store/render.h"

namespace attnprof::cli {

Action setup_changes(CLI::App& sub) {
  struct Opts {
    std::string db, format = "table";
    HistoryFilterText filter;
    stats::ChangePointSettings settings;
    bool wide = false;
    store::UnstableRuns unstable;
  };
  auto o = std::make_shared<Opts>();
  // A 0.2% shift is statistically real often enough on long series and never worth a look.
  o->settings.min_magnitude = 0.01;
  add_db_option(sub, o->db);
  sub.add_option("--case", o->filter.case_glob, "Case key glob (default: every case)")
      ->check(glob_check());
  add_history_filters(sub, o->filter);
  sub.add_option("--min-change", o->settings.min_magnitude,
                 "Smallest relative change reported (default 0.01 = 1%)");
  sub.add_option("--p", o->settings.t_test_alpha,
                 "Welch t-test threshold a change must pass (default 0.001)")
      ->check(bound(Range{.lo = 0, .hi = 1, .above = true, .below = true}));
  sub.add_option("--permutations", o->settings.permutations,
                 "Permutations of the E-divisive significance test (default 100)")
      ->check(bound(Range{.hi = 1'000'000, .what = "a whole number"}));
  sub.add_flag("--include-unstable", o->unstable.include,
               "Keep runs of a busy machine or GPU (unstable cases) in the series");
  sub.add_option("--format", o->format, "table, csv or json");
  add_wide_option(sub, o->wide);
  return [o] {
    const auto format = parse_format_option(o->format);
    auto db = open_history(o->db, store::Database::Mode::read_only);
    store::UnstableRuns unstable = o->unstable;
    auto changes = store::find_changes(db, to_filter(o->filter), o->settings, &unstable);
    fmt::print("{}", store::format_changes(changes, format, table_width(o->wide)));
    // Beside the results, never inside a CSV or JSON document.
    if (unstable.left_out > 0)
      fmt::print(stderr,
                 "attnprof changes: {} unstable run(s) of a case left out (a busy machine or "
                 "GPU; --include-unstable keeps them)\n",
                 unstable.left_out);
    return 0;
  };
}

}  // namespace attnprof::cli
