// AVX2 panel kernel: 16-bit products by vpmaddwd (B stored as int16 pairs of k, A's bytes
// zero-extended to int16), exact for every int8/uint8 operand: vpmaddubsw's 16-bit pair sums would
// saturate once 2 * 255 * |w| > 32767 (weights beyond +-64). Tiles of 6 rows x 16 columns (12
// accumulators, the two B vectors of a pair and one A broadcast: 15 of the 16 YMM registers).
//
// A is read widened to uint16 (qwiden_rows_avx2: vpmovzxbw, 16 bytes per step), so that a pair
// of k of a row is one 32-bit broadcast load: per pair and row 2 vpmaddwd and 2 vpaddd for 32
// products and no other ALU work. qgemm_rows and qgemm widen a row block once for all the panels
// that read it (qwiden_rows_avx2, then qpanel_avx2_w16 per panel, qpanel_avx2_w16_half for a last
// panel of at most 8 columns), unless its weights or its bytes allow vpmaddubsw exactly
// (kernels/int8/qgemm_bytes_avx2.cpp). The in-register alternative to widening, a vpshufb per
// broadcast of the raw bytes, measured 4-26% slower on the ResNet-18 and MobileNet layers of
// bench/qconv_bench (6% faster on the 7x7 stem, K = 147).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/int8/qepilogue_avx2.h"
#include "kernels/int8/qgemm_kernels.h"
#include "kernels/int8/qpair_rows_avx2.h"

namespace fusor::int8 {

namespace {

// Rows w16[0 .. MR) (kq groups of 4 uint16 each, rows ld apart) of the panel into acc[0 .. MR).
template <int MR>
[[gnu::always_inline]] inline void panel_rows(const uint16_t* w16, int64_t ld, const int8_t* panel, int64_t kq,
                                             __m256i (*out)[2]) {
  qpair_rows_avx2<MR>(w16, ld, panel, 2 * kq, out);
}

// panel_rows for the panel's first 8 columns only: out[r][0].
template <int MR>
[[gnu::always_inline]] inline void half_rows(const uint16_t* w16, int64_t ld, const int8_t* panel, int64_t kq,
                                            __m256i (*out)[2]) {
  __m256i acc[MR];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) acc[r] = _mm256_setzero_si256();
#pragma GCC unroll 1
  for (int64_t h = 0; h < 2 * kq; ++h) {
    const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + h * 64));
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      int32_t v;
      std::memcpy(&v, w16 + r * ld + 2 * h, 4);
      acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(_mm256_set1_epi32(v), b0));
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) out[r][0] = acc[r];
}

}  // namespace

void qwiden_rows_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp, uint16_t* w, int64_t ldw) {
  for (int64_t r = 0; r < m; ++r) {
    const uint8_t* ar = a + r * lda;
    uint16_t* wr = w + r * ldw;
    int64_t k = 0;
    for (; k + 16 <= kp; k += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(wr + k),
                          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ar + k))));
    for (; k < kp; ++k) wr[k] = ar[k];
  }
}

void qpanel_avx2_w16(const uint16_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                     int64_t ldc, const QEpilogue& ep) {
  constexpr int MR = 6;
  QEpilogueAvx2 e(ep, n);  // once per panel: its column constants and clamps
  e.load_column(0);
  e.load_column(1);
  for (int64_t i = 0; i < m; i += MR) {
    const int64_t mr = std::min<int64_t>(MR, m - i);
    const uint16_t* w16 = a + i * lda;
    // Rows [0, mr) are written by panel_rows and only they are read (no initializer: it cost a rep
    // stos per tile; GCC cannot see that the others stay unread).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
    __m256i acc[6][2];
    if (mr == 6) {
      panel_rows<6>(w16, lda, panel, kq, acc);
    } else if (mr >= 4) {
      panel_rows<4>(w16, lda, panel, kq, acc);
      if (mr == 5) panel_rows<1>(w16 + 4 * lda, lda, panel, kq, acc + 4);
    } else if (mr >= 2) {
      panel_rows<2>(w16, lda, panel, kq, acc);
      if (mr == 3) panel_rows<1>(w16 + 2 * lda, lda, panel, kq, acc + 2);
    } else {
      panel_rows<1>(w16, lda, panel, kq, acc);
    }
    qstore_tile_avx2<MR>(e, i, mr, acc, c, ldc);
#pragma GCC diagnostic pop
  }
}

// A panel of at most 8 columns (the last of an N % 16 in 1..8: 24, 40 output channels): one
// vector per row, tiles of 12 rows (12 accumulators), where the 16-column tile would compute as
// many wasted columns as real ones.
void qpanel_avx2_w16_half(const uint16_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n,
                          void* c, int64_t ldc, const QEpilogue& ep) {
  auto rows = [&]<int R>(int64_t i, __m256i(*acc)[2]) { half_rows<R>(a + i * lda, lda, panel, kq, acc); };
  qhalf_tiles_avx2<12, 4>(ep, m, n, c, ldc, rows, [](int64_t, int64_t, __m256i(*)[2]) {});
}

}  // namespace fusor::int8
