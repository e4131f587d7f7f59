// The AVX2 loop of int8::qlookup (kernels/int8/qelementwise.h): 32 lookups per step by vpshufb,
// which looks up 16-entry tables (one per 128-bit lane) and gives 0 where the index's top bit is
// set. The 256-byte table is sixteen rows of 16 entries, eight for indices below 128 and eight
// above. For an index v in [0, 128), v - 16h (bytewise, wrapping) has its top bit clear exactly for
// the rows h <= v / 16 and then keeps v's low four bits, so XOR-ing the lookups of v - 16h in
// D_h = row h ^ row h-1 (D_0 = row 0) over h = 0..7 leaves row v / 16's entry (the XORs of rows
// below cancel). Indices from 128 do the same on v ^ 0x80 in the upper rows, and the index's top
// bit picks between the two results. Exact: only bytes move; a tail is run through a 32-byte copy.
#include <immintrin.h>

#include <cstring>

#include "kernels/int8/qelementwise.h"

namespace fusor::int8 {

void qlookup_run_avx2(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n) {
  __m256i d[16];  // d[h]: lower rows' differences, d[8 + h]: upper rows', each in both lanes
  for (int h = 0; h < 16; ++h) {
    __m128i row = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * h));
    if (h % 8 != 0) row = _mm_xor_si128(row, _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * (h - 1))));
    d[h] = _mm256_broadcastsi128_si256(row);
  }
  const __m256i sixteen = _mm256_set1_epi8(16), top = _mm256_set1_epi8(static_cast<char>(0x80));
  auto look = [&](__m256i v) {
    __m256i w = _mm256_xor_si256(v, top), lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256(), u = v;
#pragma GCC unroll 8
    for (int h = 0; h < 8; ++h) {
      lo = _mm256_xor_si256(lo, _mm256_shuffle_epi8(d[h], u));
      hi = _mm256_xor_si256(hi, _mm256_shuffle_epi8(d[8 + h], w));
      u = _mm256_sub_epi8(u, sixteen);
      w = _mm256_sub_epi8(w, sixteen);
    }
    return _mm256_blendv_epi8(lo, hi, v);
  };
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), look(v));
  }
  if (i < n) {
    alignas(32) uint8_t t[32] = {};
    std::memcpy(t, x + i, static_cast<size_t>(n - i));
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), look(_mm256_load_si256(reinterpret_cast<const __m256i*>(t))));
    std::memcpy(y + i, t, static_cast<size_t>(n - i));
  }
}

}  // namespace fusor::int8
