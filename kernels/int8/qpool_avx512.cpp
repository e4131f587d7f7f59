#include <immintrin.h>

#include "kernels/int8/qpool.h"

namespace fusor::int8 {

void maxpool_row_nhwc_avx512(const Pool2d& g, const uint8_t* x, uint8_t* y, int64_t n, int64_t oh, bool sgn) {
  const __m512i flip = _mm512_set1_epi8(sgn ? static_cast<char>(0x80) : 0);
  for (int64_t ow = 0; ow < g.OW; ++ow) {
    uint8_t* out = y + ((n * g.OH + oh) * g.OW + ow) * g.C;
    for (int64_t c = 0; c < g.C; c += 64) {
      const int64_t left = g.C - c;
      const __mmask64 m = left >= 64 ? ~0ULL : (1ULL << left) - 1;
      __m512i best = _mm512_setzero_si512();
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t ih = oh * g.sh - g.pad_top + i * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t iw = ow * g.sw - g.pad_left + j * g.dw;
          if (iw < 0 || iw >= g.W) continue;
          const __m512i v = _mm512_maskz_loadu_epi8(m, x + ((n * g.H + ih) * g.W + iw) * g.C + c);
          best = _mm512_max_epu8(best, _mm512_xor_si512(v, flip));
        }
      }
      _mm512_mask_storeu_epi8(out + c, m, _mm512_xor_si512(best, flip));
    }
  }
}

}  // namespace fusor::int8
