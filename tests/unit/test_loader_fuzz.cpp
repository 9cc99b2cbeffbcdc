// A long randomized test of the scenario loader (a fuzzer without libFuzzer): valid scenarios
// mutated at random must either load into sane cases or fail with util::InputError; any other
// exception, or a crash, is a bug. ATTNPROF_FUZZ_ITERATIONS sets the count (default 3000, a
// few seconds); ATTNPROF_FUZZ_SEED the seed.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

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
                                         std::string("\0", 1),
                                         "---\n",
                                         "...\n",
                                         "%YAML 1.2\n",
                                         "[[[[[[[[[[",
                                         "{{{{{{{{"};

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
      std::string input = mutate(pool[i % pool.size()], rng, pool);
      try {
        auto suite = scenario::load_text(
            input, std::string(ATTNPROF_SOURCE_DIR) + "/scenarios/fuzz.yaml", opts);
        ++loaded;
        std::set<std::string> keys;
        for (const auto& c : suite.cases) {
          INFO("input: ", input);
          CHECK(keys.insert(c.key).second);
          CHECK(c.q_len >= 1);
          CHECK(c.kv_len >= c.q_len);
          CHECK(c.batch >= 1);
          CHECK(c.model.heads % c.model.kv_heads == 0);
        }
      } catch (const util::InputError& e) {
        ++rejected;
        INFO("input: ", input);
        CHECK_FALSE(e.diagnostics().empty());
        for (const auto& d : e.diagnostics()) CHECK_FALSE(d.message.empty());
      } catch (const std::exception& e) {
        INFO("input: ", input);
        FAIL("unexpected exception: ", e.what());
      }
    }
    MESSAGE("fuzz: ", iterations, " inputs, ", loaded, " loaded, ", rejected, " rejected");
    CHECK(loaded + rejected == iterations);
    CHECK(loaded > 0);  // the mutations must not be so wild that nothing ever loads
  }
}
