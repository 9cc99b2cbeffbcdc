#include "harness/store/portable.h"

#include <fmt/format.h>

#include <istream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/store/serialize.h"
#include "harness/util/error.h"

namespace attnprof::store {

using nlohmann::json;

namespace {

constexpr int kVersion = 1;

json to_json(const StoredVerdict& v) {
  json j = {{"case", v.case_key},
            {"verdict", v.verdict},
            {"baseline", v.baseline},
            {"detail", v.detail},
            {"created_ns", v.created_ns}};
  if (v.ratio) j["ratio"] = *v.ratio;
  if (v.ci_low) j["ci_low"] = *v.ci_low;
  if (v.ci_high) j["ci_high"] = *v.ci_high;
  if (v.p_value) j["p_value"] = *v.p_value;
  return j;
}

StoredVerdict verdict_from_json(const json& j) {
  StoredVerdict v;
  v.case_key = j.at("case").get<std::string>();
  v.verdict = j.at("verdict").get<std::string>();
  v.baseline = j.value("baseline", "");
  v.detail = j.value("detail", "");
  v.created_ns = j.value("created_ns", std::int64_t{0});
  for (auto [key, field] : {std::pair{"ratio", &v.ratio},
                            {"ci_low", &v.ci_low},
                            {"ci_high", &v.ci_high},
                            {"p_value", &v.p_value}})
    if (j.contains(key)) *field = j.at(key).get<double>();
  return v;
}

}  // namespace

PortableStats export_jsonl(Database& db, std::ostream& out, const RunFilter& filter) {
  PortableStats stats;
  out << json{{"format", "attnprof-history"}, {"version", kVersion}}.dump() << "\n";
  for (const auto& info : db.list_runs(filter)) {
    json line = {{"run", to_json(*db.load_run(info.id))}};
    json vs = json::array();
    for (const auto& v : db.verdicts(info.id)) vs.push_back(to_json(v));
    if (!vs.empty()) line["verdicts"] = vs;
    out << line.dump() << "\n";
    ++stats.runs;
  }
  for (const auto& a : db.annotations()) {
    out << json{{"annotation",
                 {{"kind", to_string(a.kind)},
                  {"case_glob", a.case_glob},
                  {"run", a.run_id},
                  {"branch", a.git_branch},
                  {"env", a.env_fingerprint},
                  {"reason", a.reason},
                  {"author", a.author},
                  {"created_ns", a.created_ns}}}}
               .dump()
        << "\n";
    ++stats.annotations;
  }
  if (!out) throw util::EnvironmentError("export: write failed (disk full or closed pipe?)");
  return stats;
}

PortableStats import_jsonl(Database& db, std::istream& in, const std::string& source) {
  PortableStats stats;
  std::string text;
  int line = 0;
  auto bad = [&](const std::string& what) {
    return util::InputError(util::Diagnostic{source, line, 0, what});
  };
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      throw bad(fmt::format("not JSON ({})", e.what()));
    }
    try {
      if (line == 1) {
        if (!j.is_object() || j.value("format", "") != "attnprof-history")
          throw bad("not an attnprof history export (no {\"format\":\"attnprof-history\"} header)");
        if (j.value("version", 0) > kVersion)
          throw bad(fmt::format("export version {} is newer than this attnprof reads ({})",
                                j.value("version", 0), kVersion));
        continue;
      }
      if (j.contains("run")) {
        core::Run run = run_from_json(j.at("run"));
        if (run.id.empty()) throw bad("run without an id");
        if (db.has_run(run.id)) {
          ++stats.runs_skipped;
        } else {
          db.write_run(run);
          ++stats.runs;
        }
        if (j.contains("verdicts")) {
          std::vector<StoredVerdict> vs;
          for (const auto& v : j.at("verdicts")) vs.push_back(verdict_from_json(v));
          db.write_verdicts(run.id, vs);
        }
      } else if (j.contains("annotation")) {
        const json& a = j.at("annotation");
        Annotation ann;
        auto kind = parse_annotation_kind(a.at("kind").get<std::string>());
        if (!kind)
          throw bad(fmt::format("unknown annotation kind \"{}\"", a.at("kind").get<std::string>()));
        ann.kind = *kind;
        ann.case_glob = a.value("case_glob", "*");
        ann.run_id = a.value("run", "");
        ann.git_branch = a.value("branch", "");
        ann.env_fingerprint = a.value("env", "");
        ann.reason = a.value("reason", "");
        ann.author = a.value("author", "");
        ann.created_ns = a.value("created_ns", std::int64_t{0});
        db.add_annotation(ann);
        ++stats.annotations;
      } else {
        throw bad("expected an object with \"run\" or \"annotation\"");
      }
    } catch (const json::exception& e) {
      throw bad(fmt::format("malformed record ({})", e.what()));
    } catch (const util::InputError& e) {
      if (e.diagnostics().size() == 1 && e.diagnostics()[0].file == source) throw;
      throw bad(e.what());
    }
  }
  if (line == 0) throw bad("empty file: not an attnprof history export");
  return stats;
}

}  // namespace attnprof::store
