// kernel.cpp: attention written out, row by row: scores, softmax, weighted sum of values.
#include "kernel.h"

#include <cmath>
#include <vector>

namespace {
volatile int passes = 1;  // how often each row is computed
}

void busy_attention(const float* q, const float* k, const float* v, float* o, int batch,
                    int heads, int kv_heads, int sq, int sk, int dim, bool causal, float scale) {
  std::vector<float> s(static_cast<size_t>(sk));
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h) {
      const int kvh = h / (heads / kv_heads);
      const float* qh = q + (static_cast<size_t>(b) * heads + h) * sq * dim;
      const float* kh = k + (static_cast<size_t>(b) * kv_heads + kvh) * sk * dim;
      const float* vh = v + (static_cast<size_t>(b) * kv_heads + kvh) * sk * dim;
      float* oh = o + (static_cast<size_t>(b) * heads + h) * sq * dim;
      for (int i = 0; i < sq; ++i)
        for (int pass = 0; pass < passes; ++pass) {
          const int last = causal ? sk - sq + i : sk - 1;
          float m = -INFINITY;
          for (int j = 0; j <= last; ++j) {
            float dot = 0;
            for (int d = 0; d < dim; ++d) dot += qh[i * dim + d] * kh[j * dim + d];
            s[j] = dot * scale;
            m = std::fmax(m, s[j]);
          }
          float sum = 0;
          for (int j = 0; j <= last; ++j) sum += (s[j] = std::exp(s[j] - m));
          for (int d = 0; d < dim; ++d) {
            float acc = 0;
            for (int j = 0; j <= last; ++j) acc += s[j] * vh[j * dim + d];
            oh[i * dim + d] = acc / sum;
          }
        }
    }
}
