// The AVX-512 VBMI loop of int8::qlookup (kernels/int8/qelementwise.h): 64 lookups per step. The
// 256-byte table sits in four registers; vpermi2b looks up the low seven bits of each index in
// two of them at a time (entries 0..127 and 128..255), and the index's top bit picks the result.
#include <immintrin.h>

#include "kernels/int8/qelementwise.h"

namespace fusor::int8 {

void qlookup_run_avx512vbmi(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  auto look = [&](__m512i v) {
    const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
  };
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) _mm512_storeu_si512(y + i, look(_mm512_loadu_si512(x + i)));
  if (i < n) {
    const __mmask64 m = (1ull << (n - i)) - 1;  // n - i < 64
    _mm512_mask_storeu_epi8(y + i, m, look(_mm512_maskz_loadu_epi8(m, x + i)));
  }
}

}  // namespace fusor::int8
