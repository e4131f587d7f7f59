// The 16-bit product loop of the AVX2 int8 kernels, for *_avx2.cpp files only (it needs their
// instruction-set flags): rows of A as 16-bit values (a pair of k is one 32-bit broadcast) against
// a panel of 16 columns stored per pair of k as the 16 columns' two int16 (64 bytes, 32-byte
// aligned), by vpmaddwd and vpaddd: 12 accumulators for 6 rows, the two B vectors of a pair and
// one broadcast, 15 of the 16 YMM registers. The widened GEMM (qgemm_avx2.cpp: uint8 A widened to
// uint16) and the Winograd products (qwinograd_avx2.cpp: int16 transforms) both run it; the sums
// are exact as long as each pair's two products fit int32 (vpmaddwd overflows only for
// -32768 * -32768 twice) and the result fits int32 (vpaddd wraps).
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace fusor::int8 {

// Rows a[0 .. MR) (rows ld 16-bit values apart, `pairs` pairs of k each) of the panel into
// out[0 .. MR).
template <int MR, class A16>
[[gnu::always_inline]] inline void qpair_rows_avx2(const A16* a, int64_t ld, const int8_t* panel, int64_t pairs,
                                                   __m256i (*out)[2]) {
  static_assert(sizeof(A16) == 2);
  // Local accumulators, copied out at the end (accumulating into out directly can make GCC keep
  // them in the caller's array, a load and a store beside every vpaddd), and one pair of k per
  // step, not unrolled: unrolled over a group's two pairs, GCC held four B vectors and spilled.
  // (Written out for two vectors: a loop over them put two accumulators back on the stack.)
  __m256i acc[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
#pragma GCC unroll 1
  for (int64_t h = 0; h < pairs; ++h) {
    const int8_t* p = panel + h * 64;
    const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32));
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      int32_t v;
      std::memcpy(&v, a + r * ld + 2 * h, 4);
      const __m256i x = _mm256_set1_epi32(v);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, b1));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    out[r][0] = acc[r][0];
    out[r][1] = acc[r][1];
  }
}

}  // namespace fusor::int8
