// A long randomized test of the scenario loader (a fuzzer without libFuzzer): valid scenarios
// mutated at random must either load into sane cases or fail with util::InputError; any other
// exception, or a crash, is a bug. ATTNPROF_FUZZ_ITERATIONS sets the count (default 3000, a
// few seconds); ATTNPROF_FUZZ_SEED the seed.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "harness/scenario/scenario.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> seeds() {
  std::vector<std::string> out{std::string(scenario::embedded_smoke_suite())};
  for (const char* f : {"llama.yaml", "mistral.yaml", "bert.yaml", "gpt2.yaml", "cpu.yaml",
                        "gpu-defaults.yaml", "models.yaml"})
    out.push_back(slurp(std::string(ATTNPROF_SOURCE_DIR) + "/scenarios/" + f));
  out.push_back(R"(
models:
  tiny: {heads: 4, kv_heads: 2, head_dim: 32, max_positions: 4096, sliding_window: 64}
model: [tiny, gpt2]
aliases: {"tiny/*": "small/*"}
workloads:
  - {name: decode, batch: [1, 2], kv_len: [128, 256], q_len: [1, 2], mask: causal, seed: 3}
  - {seq_lens: [8, 16, 4], mask: [padding, causal], scale: 0.5, level: [kernel, layer]}
  - seq_len: 512
    mask: sliding_window
    seq_lens: {distribution: uniform, min: 3, seed: 9}
    exclude: [{model: gpt2}]
    include: [{model: gpt2, mask: causal, batch: 2}]
)");
  return out;
}

const std::vector<std::string> tokens = {"*",
                                         "&a ",
                                         "*a",
                                         "[",
                                         "]",
                                         "{",
                                         "}",
                                         ": ",
                                         "- ",
                                         "\n",
                                         "  ",
                                         "\t",
                                         ",",
                                         "-1",
                                         "0",
                                         "99999999999999999999",
                                         "1e400",
                                         "nan",
                                         "%",
                                         "ms",
                                         "~",
                                         "null",
                                         "!!binary ",
                                         "'",
                                         "\"",
                                         "<<: *a\n",
                                         "? ",
                                         "|\n",
                                         "#",
                                         "extends: x.yaml\n",
                                         "model: ",
                                         "seq_len: ",
                                         "kv_len: ",
                                         "batch: ",
                                         "mask: ",
                                         "window: ",
                                         "kernels: ",
                                         "sdpa.*",
                                         "op:a::b",
                                         "workloads:\n",
                                         "include:\n  - ",
                                         "exclude:\n  - ",
                                         "seq_lens: ",
                                         "phase: decode",
                                         "level: layer",
                                         "\xff",
                                         "\xc0\x80",          // an overlong NUL
                                         "\xed\xa0\x80",      // a UTF-16 surrogate
                                         "\xf4\x90\x80\x80",  // past U+10FFFF
                                         "caf\xc3\xa9",       // UTF-8 that is fine
                                         "\xff\xfe",          // a UTF-16 byte-order mark
                                         "max_descheduled: ",
                                         std::string("\0", 1),
                                         "---\n",
                                         "...\n",
                                         "%YAML 1.2\n",
                                         "[[[[[[[[[[",
                                         "{{{{{{{{",
                                         "&w [*w]",
                                         "&m {<<: *m}",
                                         "<<: [*a, *a]\n",
                                         "{<<: *a}",
                                         "&a\n",
                                         "\"<<\": 1\n"};

std::string mutate(std::string s, std::mt19937_64& rng, const std::vector<std::string>& pool) {
  auto pick = [&](std::size_t n) {
    return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(rng) : 0;
  };
  int rounds = 1 + static_cast<int>(pick(4));
  for (int r = 0; r < rounds; ++r) {
    std::size_t at = pick(s.size() + 1);
    switch (pick(6)) {
      case 0:  // overwrite a byte
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(pick(256));
        break;
      case 1:  // delete a span
        if (!s.empty()) s.erase(pick(s.size()), 1 + pick(32));
        break;
      case 2:  // insert a token
        s.insert(at, tokens[pick(tokens.size())]);
        break;
      case 3: {  // duplicate a line
        std::size_t b = s.rfind('\n', at == 0 ? 0 : at - 1);
        b = b == std::string::npos ? 0 : b + 1;
        std::size_t e = s.find('\n', at);
        if (e == std::string::npos) e = s.size();
        s.insert(b, s.substr(b, e - b) + "\n");
        break;
      }
      case 4: {  // splice in a piece of another seed
        const std::string& o = pool[pick(pool.size())];
        std::size_t from = pick(o.size());
        s.insert(at, o.substr(from, pick(200)));
        break;
      }
      default:  // change a number
        for (std::size_t i = at; i < s.size(); ++i) {
          if (s[i] >= '0' && s[i] <= '9') {
            s[i] = static_cast<char>('0' + pick(10));
            break;
          }
        }
    }
  }
  return s;
}

// Random scenarios that use anchors, aliases and merge keys everywhere, over keys and values a
// scenario has. An alias mostly refers to a finished anchor of the same kind (so that many
// documents load); one in twenty refers to an anchor still open: a self-reference.
class AliasDocuments {
 public:
  explicit AliasDocuments(std::mt19937_64& rng) : m_rng(rng) {}

  std::string document() {
    m_done.clear();
    m_open.clear();
    m_next = 0;
    std::string out = pick(4) ? "model: gpt2\n" : "model: " + value("model") + "\n";
    if (pick(2)) out += "measure: " + value("measure") + "\n";
    out += "workloads: " + list_of_workloads() + "\n";
    return out;
  }

 private:
  enum Kind { scalar, list, map };
  struct Anchor {
    std::string name;
    Kind kind;
  };
  std::mt19937_64& m_rng;
  std::vector<Anchor> m_done, m_open;
  int m_next = 0;

  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(m_rng);
  }

  // "&aN " or "", with the anchor open until close() is called for it.
  std::string open(Kind kind) {
    if (pick(3)) return "";
    m_open.push_back({fmt::format("a{}", m_next++), kind});
    return "&" + m_open.back().name + " ";
  }
  std::string close(std::string anchor, std::string body) {
    if (!anchor.empty()) {
      m_done.push_back(m_open.back());
      m_open.pop_back();
    }
    return anchor + body;
  }

  // An alias of that kind, or "" when there is none to use.
  std::string alias(Kind kind) {
    if (!m_open.empty() && pick(20) == 0) return "*" + m_open[pick(m_open.size())].name;
    std::vector<const Anchor*> fit;
    for (const auto& a : m_done)
      if (a.kind == kind) fit.push_back(&a);
    return fit.empty() ? "" : "*" + fit[pick(fit.size())]->name;
  }

  std::string scalar_of(std::string_view key) {
    if (key == "seq_len" || key == "batch") {
      static const char* v[] = {"1", "2", "16", "64", "128", "0", "x"};
      return v[pick(std::size(v))];
    }
    if (key == "dtype") return pick(2) ? "fp16" : "bf16";
    if (key == "kernels") return pick(2) ? "eager" : "sdpa.math";
    if (key == "model") return pick(2) ? "gpt2" : "bert-base";
    if (key == "mask") return pick(2) ? "causal" : "none";
    return fmt::format("w{}", pick(1000));
  }

  std::string value(std::string_view key, int depth = 0) {
    if (std::string a = alias(key == "measure" ? map : scalar); !a.empty() && pick(3) == 0)
      return a;
    if (key == "measure") {
      std::string anchor = open(map);
      return close(anchor, "{warmup: 1ms, min_samples: " + std::to_string(5 + pick(5)) + "}");
    }
    if ((key == "seq_len" || key == "batch" || key == "kernels") && pick(2) && depth < 3) {
      std::string anchor = open(list), out = "[";
      const std::size_t n = 1 + pick(3);
      for (std::size_t i = 0; i < n; ++i) out += (i ? ", " : "") + value(key, depth + 1);
      return close(anchor, out + "]");
    }
    std::string anchor = open(scalar);
    return close(anchor, scalar_of(key));
  }

  std::string workload(int depth) {
    if (std::string a = alias(map); !a.empty() && pick(4) == 0) return a;
    std::string anchor = open(map), out = "{seq_len: " + value("seq_len");
    static const char* keys[] = {"batch", "dtype", "kernels", "mask",
                                 "name",  "<<",    "<<",      "include"};
    for (std::size_t i = 0, n = pick(4); i < n; ++i) {
      std::string k = keys[pick(std::size(keys))];
      if (out.find(", " + k + ":") != std::string::npos) continue;  // no duplicate keys
      if (k == "<<") {
        std::string a = alias(map), b = alias(map);
        if (a.empty()) continue;
        out += ", <<: " + (b.empty() || pick(2) ? a : "[" + a + ", " + b + "]");
      } else if (k == "include") {
        if (depth > 0) continue;
        out += ", include: [" + workload(depth + 1) + "]";
      } else {
        out += ", " + k + ": " + value(k);
      }
    }
    return close(anchor, out + "}");
  }

  std::string list_of_workloads() {
    std::string anchor = open(list), out = "[";
    const std::size_t n = 1 + pick(4);
    for (std::size_t i = 0; i < n; ++i) out += (i ? ", " : "") + workload(0);
    return close(anchor, out + "]");
  }
};

// Loads `input` and checks the outcome: sane cases, or diagnostics each on one line.
// Returns false when the input was rejected.
bool load_checked(const std::string& input, const scenario::LoadOptions& opts) {
  INFO("input: ", input);
  try {
    auto suite =
        scenario::load_text(input, std::string(ATTNPROF_SOURCE_DIR) + "/scenarios/fuzz.yaml", opts);
    std::set<std::string> keys;
    for (const auto& c : suite.cases) {
      CHECK(keys.insert(c.key).second);
      // Every name is UTF-8 (list --json prints them): a file that is not is refused instead.
      CHECK_NOTHROW((void)nlohmann::json({c.key, c.suite, c.workload, c.model.name}).dump());
      CHECK(c.q_len >= 1);
      CHECK(c.kv_len >= c.q_len);
      CHECK(c.batch >= 1);
      CHECK(c.model.heads % c.model.kv_heads == 0);
    }
    return true;
  } catch (const util::InputError& e) {
    CHECK_FALSE(e.diagnostics().empty());
    for (const auto& d : e.diagnostics()) {
      CHECK_FALSE(d.message.empty());
      CHECK(d.to_string().find('\n') == std::string::npos);
      // A message names the spot; it never quotes the document (a UTF-16 file's garble).
      CHECK(d.message.size() < 1000);
      CHECK_NOTHROW((void)nlohmann::json(d.to_string()).dump());
    }
    return false;
  } catch (const std::exception& e) {
    FAIL("unexpected exception: ", e.what());
    return false;
  }
}

long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

}  // namespace

TEST_SUITE("scenario::loader fuzz") {
  TEST_CASE("mutated scenarios load or fail with diagnostics, never anything else") {
    const long iterations = env_or("ATTNPROF_FUZZ_ITERATIONS", 3000);
    std::mt19937_64 rng(static_cast<std::uint64_t>(env_or("ATTNPROF_FUZZ_SEED", 1)));
    scenario::LoadOptions opts{{"sdpa.auto", "sdpa.math", "sdpa.flash", "sdpa.efficient",
                                "sdpa.cudnn", "eager", "cpu.naive", "cpu.flash", "cuda.flash",
                                "cuda.decode", "cuda.varlen"}};
    const auto pool = seeds();
    long loaded = 0, rejected = 0;
    for (long i = 0; i < iterations; ++i) {
      if (load_checked(mutate(pool[i % pool.size()], rng, pool), opts))
        ++loaded;
      else
        ++rejected;
    }
    MESSAGE("fuzz: ", iterations, " inputs, ", loaded, " loaded, ", rejected, " rejected");
    CHECK(loaded + rejected == iterations);
    CHECK(loaded > 0);  // the mutations must not be so wild that nothing ever loads
  }

  TEST_CASE("anchors, aliases and merge keys at random, self-references included") {
    const long iterations = env_or("ATTNPROF_FUZZ_ITERATIONS", 3000);
    std::mt19937_64 rng(static_cast<std::uint64_t>(env_or("ATTNPROF_FUZZ_SEED", 1)));
    scenario::LoadOptions opts{{"sdpa.auto", "sdpa.math", "eager"}};
    AliasDocuments gen(rng);
    long loaded = 0, rejected = 0, cycles = 0;
    for (long i = 0; i < iterations; ++i) {
      const std::string doc = gen.document();
      if (load_checked(doc, opts)) {
        ++loaded;
        continue;
      }
      ++rejected;
      try {
        scenario::load_text(doc, "f.yaml", opts);
      } catch (const util::InputError& e) {
        for (const auto& d : e.diagnostics())
          if (d.message.find("contains an alias to itself") != std::string::npos) ++cycles;
      }
    }
    MESSAGE("alias fuzz: ", iterations, " documents, ", loaded, " loaded, ", rejected,
            " rejected, ", cycles, " self-references");
    // The generator must reach all three outcomes, or it tests less than it claims.
    CHECK(loaded > 0);
    CHECK(cycles > 0);
    CHECK(rejected > cycles);
  }

  TEST_CASE("mask files at random: read within the case's shape, or refused in a short message") {
    // Values, junk and very long tokens, rows of any length, for shapes of 1..64 square: a read
    // holds at most twice the file's bytes, a file too large for its shape is not read at all,
    // and no message quotes more than the start of a token.
    const long iterations = env_or("ATTNPROF_FUZZ_ITERATIONS", 3000) / 10;
    std::mt19937_64 rng(static_cast<std::uint64_t>(env_or("ATTNPROF_FUZZ_SEED", 1)));
    auto pick = [&](std::size_t n) {
      return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
    };
    const std::vector<std::string> pieces = {"0", "-inf", "+0.5", "1e-3", "nan",      "inf", "x",
                                             " ", "\t",   "\n",   "\r\n", "-1.5e+38", "\xff"};
    testing::TempDir dir;
    const std::string path = dir.file("fuzz.mask");
    long read = 0, beyond = 0, refused = 0;
    for (long i = 0; i < iterations; ++i) {
      const int n = 1 + static_cast<int>(pick(64));
      std::string text;
      if (pick(3) == 0) {  // a well-formed n x n mask, one value spoiled in half of them
        const std::size_t spoiled = pick(2) ? pick(static_cast<std::size_t>(n) * n) : SIZE_MAX;
        for (int r = 0; r < n; ++r, text += '\n')
          for (int c = 0; c < n; ++c)
            text += (c ? " " : "") +
                    pieces[static_cast<std::size_t>(r) * n + c == spoiled ? 4 + pick(3) : pick(4)];
      } else {
        const std::size_t parts = pick(2) ? pick(2 * n * n + 2) : pick(20000);
        for (std::size_t k = 0; k < parts; ++k)
          text += pick(50) ? pieces[pick(pieces.size())] : std::string(1 + pick(5000), '7');
      }
      std::ofstream(path, std::ios::binary) << text;
      try {
        const scenario::MaskFile m = scenario::read_mask_file(path, n, n);
        if (!m.beyond.empty()) {
          ++beyond;
          CHECK(m.values.empty());
          CHECK(text.size() > static_cast<std::size_t>(n) * n * scenario::kMaskValueChars);
        } else {
          ++read;
          CHECK(m.values.size() * sizeof(float) <= 2 * text.size());
          CHECK(static_cast<std::size_t>(m.rows) * m.cols == m.values.size());
        }
      } catch (const util::InputError& e) {
        ++refused;
        for (const auto& d : e.diagnostics()) CHECK(d.message.size() < 200);
      }
    }
    MESSAGE("mask fuzz: ", iterations, " files, ", read, " read, ", beyond, " too large, ", refused,
            " refused");
    CHECK(read > 0);
    CHECK(beyond > 0);
    CHECK(refused > 0);
  }
}
