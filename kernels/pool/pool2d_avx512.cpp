#include "kernels/pool/pool2d_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <limits>

namespace fusor::pool_avx512 {

namespace {

// Taps t in [lo, hi) of a window starting at `start` with dilation `dil` that land in [0, in).
inline void tap_range(int64_t start, int64_t k, int64_t dil, int64_t in, int64_t& lo, int64_t& hi) {
  lo = 0;
  while (lo < k && start + lo * dil < 0) ++lo;
  hi = k;
  while (hi > lo && start + (hi - 1) * dil >= in) --hi;
}

template <bool kMax>
void rows_impl(const Pool2d& g, const float* x, float* y, int64_t r0, int64_t r1, const float* rows,
               const float* cols) {
  const int64_t C = g.C, blocks = C / 16;
  const __m512 init = _mm512_set1_ps(kMax ? std::numeric_limits<float>::lowest() : 0.f);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / g.OH, oh = r % g.OH;
    const float* xn = x + n * g.H * g.W * C;
    int64_t th0, th1;
    tap_range(oh * g.sh - g.pad_top, g.kh, g.dh, g.H, th0, th1);
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      int64_t tw0, tw1;
      const int64_t iw0 = ow * g.sw - g.pad_left;
      tap_range(iw0, g.kw, g.dw, g.W, tw0, tw1);
      float* yp = y + ((n * g.OH + oh) * g.OW + ow) * C;
      for (int64_t b = 0; b < blocks; ++b) {
        __m512 acc = init;
        for (int64_t th = th0; th < th1; ++th) {
          const int64_t ih = oh * g.sh - g.pad_top + th * g.dh;
          const float* xr = xn + ih * g.W * C + b * 16;
          for (int64_t tw = tw0; tw < tw1; ++tw) {
            const __m512 v = _mm512_loadu_ps(xr + (iw0 + tw * g.dw) * C);
            // max(v, acc) returns acc when v is NaN, as std::max(acc, v) keeps acc. The maskz form
            // (all lanes) because GCC 12 warns about _mm512_max_ps's undefined pass-through.
            acc = kMax ? _mm512_maskz_max_ps(0xFFFF, v, acc) : _mm512_add_ps(acc, v);
          }
        }
        if (!kMax) acc = _mm512_div_ps(acc, _mm512_set1_ps(rows[oh] * cols[ow]));
        _mm512_storeu_ps(yp + b * 16, acc);
      }
    }
  }
}

}  // namespace

void nhwc_rows(const Pool2d& g, const float* x, float* y, int64_t r0, int64_t r1, const float* rows,
               const float* cols) {
  if (g.mode == PoolMode::Max)
    rows_impl<true>(g, x, y, r0, r1, rows, cols);
  else
    rows_impl<false>(g, x, y, r0, r1, rows, cols);
}

}  // namespace fusor::pool_avx512
