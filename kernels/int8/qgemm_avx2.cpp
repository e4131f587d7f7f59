// AVX2 panel kernel: 16-bit products by vpmaddwd (B stored as int16 pairs of k, A's two bytes
// widened into one 32-bit broadcast), exact for every int8/uint8 operand: vpmaddubsw's 16-bit pair
// sums would saturate once 2 * 255 * |w| > 32767 (weights beyond +-64). Tiles of 4 rows x 16 columns.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/int8/qepilogue_avx2.h"
#include "kernels/int8/qgemm_kernels.h"

namespace fusor::int8 {

void qpanel_avx2(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                 int64_t ldc, const QEpilogue& ep) {
  constexpr int MR = 4, NV = 2;
  const size_t esize = ep.out == QEpilogue::Out::U8 || ep.out == QEpilogue::Out::S8 ? 1 : 4;
  const int64_t pairs = kq * 2;
  for (int64_t i = 0; i < m; i += MR) {
    const int64_t mr = std::min<int64_t>(MR, m - i);
    const uint8_t* ar[MR];
    __m256i acc[MR][NV];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      ar[r] = a + (i + std::min<int64_t>(r, mr - 1)) * lda;
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_si256();
    }
    for (int64_t p = 0; p < pairs; ++p) {
      const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + p * 64));
      const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + p * 64 + 32));
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const uint32_t lo = ar[r][2 * p], hi = ar[r][2 * p + 1];
        const __m256i bc = _mm256_set1_epi32(static_cast<int32_t>(lo | (hi << 16)));
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(bc, b0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(bc, b1));
      }
    }
    const QEpilogue e0 = ep.offset(i, 0);
    QEpilogueAvx2 e(e0, n);
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) e.load_column(v);
    char* ci = static_cast<char*>(c) + i * ldc * static_cast<int64_t>(esize);
    // Loops unrolled completely so acc stays in registers (kernels/int8/qgemm_avx512vnni.cpp).
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) e.store(acc[r][v], r, v, ci, ldc);
    }
  }
}

}  // namespace fusor::int8
