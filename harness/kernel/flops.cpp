// The FLOP definition (flops.h): visible pairs counted row by row in closed form per query.
#include "harness/kernel/flops.h"

#include <algorithm>
#include <map>
#include <vector>

namespace attnprof::kernel {
namespace {

// Visible keys of one sequence with `len` valid keys, summed over its queries.
double sequence_pairs(const core::Case& c, int len) {
  const int first = c.q_len == c.kv_len ? 0 : len - c.q_len;  // the first query's position
  // The documents' bounds, for mask document: doc_end[d] is one past document d's last key.
  std::vector<int> doc_end;
  for (int n : c.documents) doc_end.push_back((doc_end.empty() ? 0 : doc_end.back()) + n);
  std::size_t doc = 0;
  double pairs = 0;
  for (int i = 0; i < c.q_len; ++i) {
    const int p = first + i;
    int lo = 0, hi = len;  // the visible keys are [lo, hi)
    switch (c.mask) {
      case core::MaskKind::causal:
        hi = std::min(len, p + 1);
        break;
      case core::MaskKind::sliding_window:
        hi = std::min(len, p + 1);
        if (c.window > 0) lo = std::max(0, p - c.window + 1);
        break;
      case core::MaskKind::prefix:
        hi = std::min(len, std::max(c.prefix, p + 1));
        break;
      case core::MaskKind::document:
        while (doc + 1 < doc_end.size() && doc_end[doc] <= p) ++doc;
        if (!doc_end.empty()) {
          lo = doc == 0 ? 0 : doc_end[doc - 1];
          hi = std::min(len, doc_end[doc]);
        }
        break;
      default:
        break;
    }
    pairs += std::max(0, hi - lo);
  }
  return pairs;
}

}  // namespace

double attention_pairs(const core::Case& c) {
  if (c.seq_lens.empty()) return double(c.batch) * sequence_pairs(c, c.kv_len);
  std::map<int, double> by_len;  // sequences of one length see the same keys
  double pairs = 0;
  for (int b = 0; b < c.batch; ++b) {
    const int len = std::min(c.kv_len, c.seq_lens[static_cast<size_t>(b) % c.seq_lens.size()]);
    auto [it, fresh] = by_len.try_emplace(len, 0.0);
    if (fresh) it->second = sequence_pairs(c, len);
    pairs += it->second;
  }
  return pairs;
}

double attention_flops(const core::Case& c) {
  return 4.0 * c.model.heads * c.model.head_dim * attention_pairs(c);
}

}  // namespace attnprof::kernel
