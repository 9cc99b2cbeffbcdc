// kernel::attention_pairs, the one FLOP definition: pinned against the element mask itself,
// counted by brute force on small cases of every mask kind, padding and decode included.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "harness/kernel/flops.h"

using namespace attnprof;

namespace {

// Whether key k is visible to the query at position p, by docs/scenarios.md's definitions,
// written as plainly as possible: the check the closed forms must agree with.
bool visible(const core::Case& c, int p, int k, int len) {
  if (k >= len) return false;
  switch (c.mask) {
    case core::MaskKind::causal: return k <= p;
    case core::MaskKind::sliding_window: return k <= p && k > p - c.window;
    case core::MaskKind::prefix: return k < c.prefix || k <= p;
    case core::MaskKind::document: {
      auto doc = [&](int pos) {
        int end = 0, d = 0;
        for (int n : c.documents) {
          end += n;
          if (pos < end) return d;
          ++d;
        }
        return d;
      };
      return doc(k) == doc(p);
    }
    default: return true;
  }
}

double brute_force(const core::Case& c) {
  double n = 0;
  for (int b = 0; b < c.batch; ++b) {
    const int len = c.seq_lens.empty() ? c.kv_len
                                       : std::min(c.kv_len, c.seq_lens[b % c.seq_lens.size()]);
    for (int i = 0; i < c.q_len; ++i) {
      const int p = c.q_len == c.kv_len ? i : len - c.q_len + i;
      for (int k = 0; k < c.kv_len; ++k) n += visible(c, p, k, len);
    }
  }
  return n;
}

core::Case small(core::MaskKind m, int q, int kv) {
  core::Case c;
  c.model.heads = 3;
  c.model.head_dim = 8;
  c.batch = 2;
  c.q_len = q;
  c.kv_len = kv;
  c.mask = m;
  return c;
}

}  // namespace

TEST_SUITE("kernel::flops") {
  TEST_CASE("useful pairs are the element mask's, for every mask kind") {
    using M = core::MaskKind;
    for (const auto& [q, kv] : std::vector<std::pair<int, int>>{{13, 13}, {1, 13}, {4, 13}}) {
      CAPTURE(q);
      for (M m : {M::none, M::causal, M::sliding_window, M::prefix, M::document, M::padding,
                  M::custom}) {
        CAPTURE(core::to_string(m));
        core::Case c = small(m, q, kv);
        c.window = 4;
        c.prefix = 5;
        c.documents = {3, 6, 4};
        CHECK(kernel::attention_pairs(c) == brute_force(c));
        c.seq_lens = {13, 7};  // padding beside the mask
        if (m != M::document) CHECK(kernel::attention_pairs(c) == brute_force(c));
      }
    }
  }

  TEST_CASE("the counts by hand") {
    core::Case c = small(core::MaskKind::document, 8, 8);
    c.batch = 1;
    c.documents = {3, 5};  // 3*3 + 5*5
    CHECK(kernel::attention_pairs(c) == 34);
    c.mask = core::MaskKind::prefix;
    c.prefix = 4;  // queries 0-3 see 4 keys, 4-7 see p+1: 16 + 5+6+7+8
    CHECK(kernel::attention_pairs(c) == 42);
    c.mask = core::MaskKind::causal;
    CHECK(kernel::attention_pairs(c) == 36);
    // FLOPs: 4 * heads * head_dim per pair.
    CHECK(kernel::attention_flops(c) == 4.0 * 3 * 8 * 36);
  }
}
