// attnprof import FILE...: read history exported by `attnprof export`; runs already present
// are skipped, so importing twice is harmless.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/store/portable.h"
#include "harness/util/error.h"

namespace attnprof::cli {

Action setup_import(CLI::App& sub) {
  struct Opts {
    std::string db;
    std::vector<std::string> inputs;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_option("inputs", o->inputs, "Export files (- for stdin)")->required();
  return [o] {
    auto db = open_history(o->db);
    for (const auto& in : o->inputs) {
      store::PortableStats s;
      if (in == "-") {
        s = store::import_jsonl(db, std::cin, "<stdin>");
      } else {
        std::ifstream file(in);
        if (!file) throw util::InputError(util::Diagnostic{in, 0, 0, "cannot read this file"});
        s = store::import_jsonl(db, file, in);
      }
      fmt::print("{}: {} runs imported, {} already present, {} annotations, {} A/B pairs' rounds{}\n",
                 in, s.runs, s.runs_skipped, s.annotations, s.ab_pairs,
                 s.ab_pairs_skipped ? fmt::format(" ({} pairs' rounds left out: none of their runs "
                                                  "is stored)",
                                                  s.ab_pairs_skipped)
                                    : std::string());
    }
    return 0;
  };
}

}  // namespace attnprof::cli
