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
      for_each_nhwc_tap(g, x, n, oh, ow, [&](const uint8_t* in) {
        best = _mm512_max_epu8(best, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, in + c), flip));
      });
      _mm512_mask_storeu_epi8(out + c, m, _mm512_xor_si512(best, flip));
    }
  }
}

}  // namespace fusor::int8
