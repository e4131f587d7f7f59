// AVX2 panel kernel: 16-bit products by vpmaddwd (B stored as int16 pairs of k, A's two bytes
// zero-extended into the two 16-bit halves of every 32-bit lane), exact for every int8/uint8
// operand: vpmaddubsw's 16-bit pair sums would saturate once 2 * 255 * |w| > 32767 (weights beyond
// +-64). Tiles of 6 rows x 16 columns (12 accumulators, the two B vectors of a pair, one A vector
// and the byte-spreading mask: the 16 YMM registers).
//
// A's bytes reach the lanes without scalar code: one 4-byte broadcast load per row and group of
// 4 k (vpbroadcastd from memory, a load-port operation) serves both pairs of the group, each pair
// spread into 16-bit halves by one vpshufb. Per pair and row: 1 shuffle, 2 vpmaddwd, 2 vpaddd
// for 32 products (the previous form built every broadcast from two scalar byte loads, a shift,
// an or and a move: half the speed).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/int8/qepilogue_avx2.h"
#include "kernels/int8/qgemm_kernels.h"

namespace fusor::int8 {

namespace {

// Rows ar[0 .. MR) of the panel into acc[0 .. MR).
template <int MR>
[[gnu::always_inline]] inline void panel_rows(const uint8_t* const* ar, const int8_t* panel, int64_t kq,
                                             __m256i (*acc)[2]) {
  // Bytes 0 and 1 (pair 0) or 2 and 3 (pair 1) of each 32-bit lane into its two 16-bit halves.
  const __m256i spread0 = _mm256_setr_epi8(0, -1, 1, -1, 0, -1, 1, -1, 0, -1, 1, -1, 0, -1, 1, -1, 0, -1, 1, -1, 0,
                                           -1, 1, -1, 0, -1, 1, -1, 0, -1, 1, -1);
  const __m256i spread1 = _mm256_setr_epi8(2, -1, 3, -1, 2, -1, 3, -1, 2, -1, 3, -1, 2, -1, 3, -1, 2, -1, 3, -1, 2,
                                           -1, 3, -1, 2, -1, 3, -1, 2, -1, 3, -1);
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int64_t q = 0; q < kq; ++q) {
    const int8_t* p = panel + q * 128;
    {
      const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
      const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32));
#pragma GCC unroll 6
      for (int r = 0; r < MR; ++r) {
        int32_t v;
        std::memcpy(&v, ar[r] + 4 * q, 4);
        const __m256i x = _mm256_shuffle_epi8(_mm256_set1_epi32(v), spread0);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, b0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, b1));
      }
    }
    {
      const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 64));
      const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 96));
#pragma GCC unroll 6
      for (int r = 0; r < MR; ++r) {
        int32_t v;
        std::memcpy(&v, ar[r] + 4 * q, 4);
        const __m256i x = _mm256_shuffle_epi8(_mm256_set1_epi32(v), spread1);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, b0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, b1));
      }
    }
  }
}

}  // namespace

void qpanel_avx2(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                 int64_t ldc, const QEpilogue& ep) {
  constexpr int MR = 6, NV = 2;
  const size_t esize = ep.out == QEpilogue::Out::U8 || ep.out == QEpilogue::Out::S8 ? 1 : 4;
  for (int64_t i = 0; i < m; i += MR) {
    const int64_t mr = std::min<int64_t>(MR, m - i);
    const uint8_t* ar[MR];
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) ar[r] = a + (i + std::min<int64_t>(r, mr - 1)) * lda;
    __m256i acc[6][2] = {};  // (every row used is zeroed by panel_rows: this is for the compiler)
    // Fewer rows at the bottom: a shorter tile rather than repeated rows.
    if (mr == 6) {
      panel_rows<6>(ar, panel, kq, acc);
    } else if (mr >= 4) {
      panel_rows<4>(ar, panel, kq, acc);
      if (mr > 4) panel_rows<2>(ar + 4, panel, kq, acc + 4);
    } else if (mr >= 2) {
      panel_rows<2>(ar, panel, kq, acc);
      if (mr > 2) panel_rows<1>(ar + 2, panel, kq, acc + 2);
    } else {
      panel_rows<1>(ar, panel, kq, acc);
    }
    const QEpilogue e0 = ep.offset(i, 0);
    QEpilogueAvx2 e(e0, n);
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) e.load_column(v);
    char* ci = static_cast<char*>(c) + i * ldc * static_cast<int64_t>(esize);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) e.store(acc[r][v], r, v, ci, ldc);
    }
  }
}

}  // namespace fusor::int8
