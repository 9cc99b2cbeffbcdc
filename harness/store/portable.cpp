// attnprof export and import (portable.h): the history as JSON lines; an import checks every
// line before it stores anything, in one transaction.
#include "harness/store/portable.h"

#include <fmt/format.h>

#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <vector>

#include "harness/store/render.h"
#include "harness/store/serialize.h"
#include "harness/util/error.h"

namespace attnprof::store {

using nlohmann::json;

namespace {

// 1: runs, verdicts, annotations; 2: and A/B rounds. Export writes 2 only when it has rounds.
constexpr int kOldestVersion = 1, kVersion = 2;

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
  if (!j.is_object())
    throw FieldError("", fmt::format("expected an object, got {}", j.type_name()));
  StoredVerdict v;
  read_field(j, "case", v.case_key);
  read_field(j, "verdict", v.verdict);
  if (v.case_key.empty() || v.verdict.empty())
    throw FieldError(v.case_key.empty() ? "case" : "verdict", "missing");
  read_field(j, "baseline", v.baseline);
  read_field(j, "detail", v.detail);
  read_field(j, "created_ns", v.created_ns);
  read_field(j, "ratio", v.ratio);
  read_field(j, "ci_low", v.ci_low);
  read_field(j, "ci_high", v.ci_high);
  read_field(j, "p_value", v.p_value);
  return v;
}

Annotation annotation_from_json(const json& a) {
  if (!a.is_object())
    throw FieldError("", fmt::format("expected an object, got {}", a.type_name()));
  Annotation ann;
  std::string kind;
  read_field(a, "kind", kind);
  auto k = parse_annotation_kind(kind);
  if (!k) throw FieldError("kind", fmt::format("unknown annotation kind \"{}\"", kind));
  ann.kind = *k;
  read_field(a, "case_glob", ann.case_glob);
  read_field(a, "run", ann.run_id);
  read_field(a, "branch", ann.git_branch);
  read_field(a, "env", ann.env_fingerprint);
  read_field(a, "reason", ann.reason);
  read_field(a, "author", ann.author);
  read_field(a, "created_ns", ann.created_ns);
  return ann;
}

// The fields of a run record that every export version writes.
constexpr const char* kRequiredRunFields[] = {"id",     "git_commit", "started_ns", "ended_ns",
                                              "status", "env",        "cases"};

// One line of an export, read and checked before anything is written.
struct Record {
  int line = 0;
  std::optional<core::Run> run;
  std::optional<std::vector<StoredVerdict>> verdicts;
  std::optional<Annotation> annotation;
  std::string pair;  // with rounds: an A/B pair's
  std::optional<std::vector<AbRound>> rounds;
};

// j[key], an array, each element read by `read`; errors name the element ("key[3].field").
template <class Read>
auto read_array(const json& j, const char* key, Read read) {
  std::vector<decltype(read(j))> out;
  if (!j.contains(key) || !j.at(key).is_array())
    throw FieldError(key, j.contains(key)
                              ? fmt::format("expected an array, got {}", j.at(key).type_name())
                              : std::string("expected an array"));
  const json& a = j.at(key);
  for (std::size_t i = 0; i < a.size(); ++i) {
    try {
      out.push_back(read(a[i]));
    } catch (const FieldError& e) {
      throw e.within(fmt::format("{}[{}]", key, i));
    }
  }
  return out;
}

void read_rounds(const json& a, Record& r) {
  if (!a.is_object())
    throw FieldError("", fmt::format("expected an object, got {}", a.type_name()));
  read_field(a, "pair", r.pair);
  if (r.pair.empty()) throw FieldError("pair", "missing");
  r.rounds = read_array(a, "rounds", ab_round_from_json);
}

// Where an import is; its errors name the source and the line.
struct ImportSpot {
  const std::string& source;
  int line = 0;
  util::InputError error(const std::string& what) const {
    return util::InputError(util::Diagnostic{source, line, 0, what});
  }
};

json parse_line(const std::string& text, const ImportSpot& at) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
    throw at.error(fmt::format("not JSON ({})", e.what()));
  }
}

// The first line: {"format": "attnprof-history", "version": n}, n a version this reads.
void check_header(const json& j, const ImportSpot& at) {
  if (!j.is_object() || !j.contains("format") || j.at("format") != "attnprof-history")
    throw at.error("not an attnprof history export (no {\"format\":\"attnprof-history\"} header)");
  // An exact integer: 1.5, -1 or 2^64 is no version we wrote, and a reader that rounds
  // would take a damaged header for a good one.
  const json* v = j.contains("version") ? &j.at("version") : nullptr;
  const std::string versions = fmt::format("{} to {}", kOldestVersion, kVersion);
  if (!v || !v->is_number_integer())
    throw at.error(fmt::format("\"version\": expected an integer, {}, got {}", versions,
                               v ? v->dump() : "nothing"));
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > kVersion)
    throw at.error(fmt::format("export version {} is newer than this attnprof reads ({})",
                               v->dump(), versions));
  if (*v < kOldestVersion)
    throw at.error(fmt::format("\"version\": {} is not an export version (this attnprof reads {})",
                               v->dump(), versions));
}

// A line after the header: a run (with its verdicts), an annotation or an A/B pair's rounds.
// A field's problem is a FieldError naming the field within the record.
Record record_from_json(const json& j, const ImportSpot& at) {
  Record r{at.line, {}, {}, {}, {}, {}};
  if (!j.is_object())
    throw FieldError("", "expected an object with \"run\", \"annotation\" or \"ab_rounds\"");
  if (j.contains("run")) {
    try {
      r.run = run_from_json(j.at("run"));
    } catch (const FieldError& e) {
      throw e.within("run");
    }
    if (r.run->id.empty()) throw at.error("run without an id");
    if (j.contains("verdicts")) r.verdicts = read_array(j, "verdicts", verdict_from_json);
    // What every export writes and a stored run needs (a value of the wrong type is named
    // above): the reader fills a missing one in (a start in 1970, status "complete"), and a
    // damaged record would pass for a run.
    for (const char* key : kRequiredRunFields)
      if (!j.at("run").contains(key)) throw FieldError(key, "missing").within("run");
  } else if (j.contains("annotation")) {
    try {
      r.annotation = annotation_from_json(j.at("annotation"));
    } catch (const FieldError& e) {
      throw e.within("annotation");
    }
  } else if (j.contains("ab_rounds")) {
    try {
      read_rounds(j.at("ab_rounds"), r);
    } catch (const FieldError& e) {
      throw e.within("ab_rounds");
    }
  } else {
    throw at.error("expected an object with \"run\", \"annotation\" or \"ab_rounds\"");
  }
  return r;
}

// record_from_json, its field errors as the line's ("field \"run.id\": ...").
Record read_record(const json& j, const ImportSpot& at) {
  try {
    return record_from_json(j, at);
  } catch (const FieldError& e) {
    if (e.field().empty()) throw at.error(e.problem());
    // The unknown-kind message names its value already.
    if (e.problem().starts_with("unknown annotation kind")) throw at.error(e.problem());
    throw at.error(fmt::format("field \"{}\": {}", e.field(), e.problem()));
  }
}

// Every line of an export, checked; the first problem is thrown, naming its line.
std::vector<Record> read_records(std::istream& in, ImportSpot& at) {
  std::vector<Record> records;
  std::string text;
  while (std::getline(in, text)) {
    ++at.line;
    if (text.empty()) continue;
    const json j = parse_line(text, at);
    if (at.line == 1)
      check_header(j, at);
    else
      records.push_back(read_record(j, at));
  }
  if (at.line == 0) throw at.error("empty file: not an attnprof history export");
  return records;
}

// What tells two runs apart at a glance.
std::string key_fields(const core::Run& r) {
  return fmt::format("commit {}, branch {}, started {}, status {}, {} cases, environment {}",
                     r.git_commit.substr(0, 12), r.git_branch.empty() ? "-" : r.git_branch,
                     format_time(r.started_ns), r.status, r.cases.size(),
                     r.env.fingerprint().substr(0, 12));
}

// A run id already stored: the same content is already present (importing twice is harmless);
// other content under that id is two runs claiming one id, and neither may silently win.
void check_same_run(Database& db, const core::Run& incoming, const ImportSpot& at) {
  if (auto d = run_difference(db.load_listed_run(incoming.id), incoming, "this line"))
    throw at.error(fmt::format(
        "run {} is already stored with other content ({}): import it into another history, or "
        "remove one of the two",
        incoming.id, *d));
}

void write_record(Database& db, const Record& r, PortableStats& stats, const ImportSpot& at) {
  if (r.run) {
    if (db.has_run(r.run->id)) {
      check_same_run(db, *r.run, at);
      ++stats.runs_skipped;
    } else {
      db.write_run(*r.run);
      ++stats.runs;
    }
    if (r.verdicts) db.write_verdicts(r.run->id, *r.verdicts);
  } else if (r.annotation) {
    db.add_annotation(*r.annotation);
    ++stats.annotations;
  } else if (r.rounds) {
    // Rounds belong to stored runs: those of a pair whose runs were left out are not kept.
    if (db.has_pair(r.pair)) {
      db.write_rounds(r.pair, *r.rounds);
      ++stats.ab_pairs;
    } else {
      ++stats.ab_pairs_skipped;
    }
  }
}

// A line of the export as text. A stored text that is not UTF-8 (a flipped byte) cannot be
// JSON: util::EnvironmentError naming the record, as a damaged row is named, not an internal
// error (nor the bytes replaced, which would pass the damage on as data).
std::string line_text(Database& db, const json& line, const std::string& what) {
  try {
    return line.dump();
  } catch (const json::type_error& e) {
    throw util::EnvironmentError(fmt::format(
        "{}: {} holds text that is not UTF-8 ({}); the history is damaged: restore it from a "
        "backup, or export what is readable and import it into a new one",
        db.path(), what, e.what()));
  }
}

}  // namespace

std::optional<std::string> run_difference(const core::Run& stored, const core::Run& other,
                                          std::string_view other_name) {
  const json have = store::to_json(stored), got = store::to_json(other);
  if (have == got) return std::nullopt;
  return fmt::format("stored: {}; {}: {}; first difference at {}", key_fields(stored), other_name,
                     key_fields(other), json::diff(have, got).at(0).at("path").get<std::string>());
}

PortableStats export_jsonl(Database& db, std::ostream& out, const RunFilter& filter) {
  PortableStats stats;
  const auto runs = db.list_runs(filter);
  // The A/B pairs among the runs, in order, and their rounds: the header's version says
  // whether there are any.
  std::vector<std::pair<std::string, std::vector<AbRound>>> pairs;
  for (const auto& pair : pair_ids(runs)) {
    auto rounds = db.rounds(pair);
    if (!rounds.empty()) pairs.emplace_back(pair, std::move(rounds));
  }
  out << json{{"format", "attnprof-history"},
              {"version", pairs.empty() ? kOldestVersion : kVersion}}
             .dump()
      << "\n";
  for (const auto& info : runs) {
    std::string text;
    try {
      json line = {{"run", to_json(db.load_listed_run(info.id))}};
      json vs = json::array();
      for (const auto& v : db.verdicts(info.id)) vs.push_back(to_json(v));
      if (!vs.empty()) line["verdicts"] = vs;
      text = line_text(db, line, fmt::format("run {}", info.id));
    } catch (const sql::BusyError&) {
      throw;
    } catch (const util::EnvironmentError& e) {
      // A damaged row or page: what else is there is still worth having.
      stats.unreadable.push_back(e.what());
      continue;
    }
    out << text << "\n";
    ++stats.runs;
  }
  for (const auto& [pair, rounds] : pairs) {
    json rs = json::array();
    for (const auto& r : rounds) rs.push_back(to_json(r));
    out << line_text(db, json{{"ab_rounds", {{"pair", pair}, {"rounds", rs}}}},
                     fmt::format("A/B pair {}", pair))
        << "\n";
    ++stats.ab_pairs;
  }
  for (const auto& a : db.annotations()) {
    out << line_text(db,
                     json{{"annotation",
                           {{"kind", to_string(a.kind)},
                            {"case_glob", a.case_glob},
                            {"run", a.run_id},
                            {"branch", a.git_branch},
                            {"env", a.env_fingerprint},
                            {"reason", a.reason},
                            {"author", a.author},
                            {"created_ns", a.created_ns}}}},
                     fmt::format("annotation {}", a.id))
        << "\n";
    ++stats.annotations;
  }
  if (!out) throw util::EnvironmentError("export: write failed (disk full or closed pipe?)");
  return stats;
}

PortableStats import_jsonl(Database& db, std::istream& in, const std::string& source) {
  ImportSpot at{source};
  // Every line is read and checked first, and everything is written in one transaction: a
  // damaged export adds nothing, not the runs before the damage.
  const std::vector<Record> records = read_records(in, at);
  PortableStats stats;
  sql::Transaction tx(db.connection());
  for (const Record& r : records) {
    at.line = r.line;
    try {
      write_record(db, r, stats, at);
    } catch (const util::InputError& e) {
      if (e.diagnostics().size() == 1 && e.diagnostics()[0].file == source) throw;
      throw at.error(e.what());
    }
  }
  tx.commit();
  return stats;
}

}  // namespace attnprof::store
