// The CPU reference: for each (batch, query head) materialize the [Sq, Sk] score matrix in
// double, mask it, softmax each row, multiply by V. No tiling and no threads, so there is
// little to get wrong; tests/unit/test_cpu_naive.cpp checks it against hand-computed values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"

namespace attnprof::kernels::cpu {

Status naive_forward(const AttentionParams& p) {
  if (const char* why = check_params(p)) return Status::unsupported(why);
  const int D = p.head_dim;
  const int group = p.heads_q / p.heads_kv;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> scores, kbuf, vbuf, qrow(D), orow(D);
  std::vector<float> row(D);
  for (int b = 0; b < p.batch; ++b) {
    const SequenceView s = sequence_view(p, b);
    kbuf.assign(static_cast<size_t>(s.len_k) * D, 0.0);
    vbuf.assign(static_cast<size_t>(s.len_k) * D, 0.0);
    scores.assign(static_cast<size_t>(s.len_q) * s.len_k, neg_inf);
    for (int h = 0; h < p.heads_q; ++h) {
      const int hk = h / group;
      if (h % group == 0) {  // a new kv head: load its keys and values once
        for (int j = 0; j < s.len_k; ++j) {
          load_row(p.k, p.dtype, s.k_offset + hk * p.k_stride_h + j * p.k_stride_s, D, row.data());
          std::copy(row.begin(), row.end(), kbuf.begin() + static_cast<size_t>(j) * D);
          load_row(p.v, p.dtype, s.v_offset + hk * p.v_stride_h + j * p.v_stride_s, D, row.data());
          std::copy(row.begin(), row.end(), vbuf.begin() + static_cast<size_t>(j) * D);
        }
      }
      for (int i = 0; i < s.len_q; ++i) {
        load_row(p.q, p.dtype, s.q_offset + h * p.q_stride_h + i * p.q_stride_s, D, row.data());
        std::copy(row.begin(), row.end(), qrow.begin());
        double* srow = scores.data() + static_cast<size_t>(i) * s.len_k;
        std::fill(srow, srow + s.len_k, neg_inf);
        const KeyRange r = key_range(p, s, i);
        for (int j = r.lo; j < r.hi; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += qrow[d] * kbuf[static_cast<size_t>(j) * D + d];
          srow[j] = dot * p.scale + mask_value(p, b, i, j);
        }
      }
      for (int i = 0; i < s.len_q; ++i) {
        double* srow = scores.data() + static_cast<size_t>(i) * s.len_k;
        const double mx = s.len_k ? *std::max_element(srow, srow + s.len_k) : neg_inf;
        std::fill(orow.begin(), orow.end(), 0.0);
        if (mx != neg_inf) {  // else the row sees no key: zeros
          double sum = 0;
          for (int j = 0; j < s.len_k; ++j) sum += srow[j] = std::exp(srow[j] - mx);
          for (int j = 0; j < s.len_k; ++j) {
            if (srow[j] == 0) continue;
            const double w = srow[j] / sum;
            for (int d = 0; d < D; ++d) orow[d] += w * vbuf[static_cast<size_t>(j) * D + d];
          }
        }
        for (int d = 0; d < D; ++d) row[d] = static_cast<float>(orow[d]);
        store_row(p.o, p.dtype, s.o_offset + h * p.o_stride_h + i * p.o_stride_s, D, row.data());
      }
    }
  }
  return Status::success();
}

}  // namespace attnprof::kernels::cpu
