// AVX2 panel kernel for narrow weights: vpmaddubsw (uint8 A x int8 B, pairs of k summed to int16),
// vpmaddwd by ones (int16 pairs to int32) and vpaddd; three instructions per 32 products, two of
// them multiplies, against four for the widened kernel (kernels/int8/qgemm_avx2.cpp). Exact only
// when no pair of products can leave int16: QPackedB chooses this form at packing when every
// pair of k of every column has positive weights summing to at most 128 and negative ones to at
// least -128 (255 * 128 = 32640 <= 32767), which holds for weights in [-64, 64] (ONNX Runtime's
// reduce_range quantization) and fails for most full-range 8-bit weights.
//
// B has the byte layout of the VNNI kernels ([k / 4][16 columns][k % 4]); A is read as it is,
// four bytes of a row per broadcast. Tiles of 5 rows x 16 columns: with six, the twelve
// accumulators, the two B vectors, the broadcast, the ones and a product need 17 YMM registers
// and GCC kept an accumulator on the stack (the kernel is bound by its multiplies, two per 32
// products, at any row count).
//
// The split form (qsplit_rows_avx2, qpanel_avx2_split) serves full-range weights too: A's bytes
// with their top bit cleared ([0, 127]: 2 * 127 * 128 = 32512, no pair can saturate, whatever
// the weights) through the same loop, then 128 * b(k, :) added for each byte that was >= 128.
// Worth it where such bytes are rare: activations after Relu or Clip with a zero point near 0
// (under 1% of ResNet-18's and MobileNet v2's conv inputs); qgemm.cpp falls back to the widened
// kernel for a block of rows with more.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/int8/qepilogue_avx2.h"
#include "kernels/int8/qgemm_kernels.h"

namespace fusor::int8 {

namespace {

template <int MR>
[[gnu::always_inline]] inline void byte_rows(const uint8_t* a, int64_t lda, const int8_t* panel, int64_t kq,
                                            __m256i (*out)[2]) {
  // Local accumulators, copied out at the end: accumulating into out directly made GCC store them
  // to the caller's array on every step.
  __m256i acc[MR][2];
#pragma GCC unroll 5
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 1
  for (int64_t q = 0; q < kq; ++q) {
    const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + q * 64));
    const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + q * 64 + 32));
#pragma GCC unroll 5
    for (int r = 0; r < MR; ++r) {
      int32_t v;
      std::memcpy(&v, a + r * lda + 4 * q, 4);
      const __m256i x = _mm256_set1_epi32(v);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b0), ones));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b1), ones));
    }
  }
#pragma GCC unroll 5
  for (int r = 0; r < MR; ++r) {
    out[r][0] = acc[r][0];
    out[r][1] = acc[r][1];
  }
}

// The tiles of rows [i, i + mr) (mr <= 5) into acc through byte_rows: rows [0, mr) of acc written.
[[gnu::always_inline]] inline void byte_tiles(const uint8_t* ai, int64_t lda, int64_t mr, const int8_t* panel,
                                              int64_t kq, __m256i (*acc)[2]) {
  if (mr == 5) {
    byte_rows<5>(ai, lda, panel, kq, acc);
  } else if (mr == 4) {
    byte_rows<4>(ai, lda, panel, kq, acc);
  } else if (mr >= 2) {
    byte_rows<2>(ai, lda, panel, kq, acc);
    if (mr == 3) byte_rows<1>(ai + 2 * lda, lda, panel, kq, acc + 2);
  } else {
    byte_rows<1>(ai, lda, panel, kq, acc);
  }
}

// Rows [0, mr) of acc are written by byte_tiles and only they are read (no initializer: it cost a
// rep stos per tile; GCC cannot see that the others stay unread).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// The panel over rows [0, m) of a (bytes, lda apart): per 5-row tile byte_tiles, then fix(i, mr,
// acc) (the split form's high bits, or nothing), then the epilogue.
template <class Fix>
[[gnu::always_inline]] inline void byte_panel(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel,
                                              int64_t kq, int64_t n, void* c, int64_t ldc, const QEpilogue& ep,
                                              Fix fix) {
  constexpr int MR = 5;
  QEpilogueAvx2 e(ep, n);  // once per panel: its column constants and clamps
  e.load_column(0);
  e.load_column(1);
  for (int64_t i = 0; i < m; i += MR) {
    const int64_t mr = std::min<int64_t>(MR, m - i);
    __m256i acc[MR][2];
    byte_tiles(a + i * lda, lda, mr, panel, kq, acc);
    fix(i, mr, acc);
    qstore_tile_avx2<MR>(e, i, mr, acc, c, ldc);
  }
}

#pragma GCC diagnostic pop

}  // namespace

void qpanel_avx2_bytes(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                       int64_t ldc, const QEpilogue& ep) {
  byte_panel(a, lda, m, panel, kq, n, c, ldc, ep, [](int64_t, int64_t, __m256i (*)[2]) {});
}

bool qsplit_rows_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp, uint8_t* lo, int64_t ldl,
                      int32_t* hot_start, uint16_t* hot_k, int64_t max_hot) {
  if (kp > 65536) return false;
  const __m256i low7 = _mm256_set1_epi8(0x7f);
  int64_t n = 0;
  for (int64_t r = 0; r < m; ++r) {
    const uint8_t* ar = a + r * lda;
    uint8_t* lr = lo + r * ldl;
    hot_start[r] = static_cast<int32_t>(n);
    int64_t k = 0;
    for (; k + 32 <= kp; k += 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + k));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lr + k), _mm256_and_si256(v, low7));
      uint32_t hot = static_cast<uint32_t>(_mm256_movemask_epi8(v));  // the bytes >= 128
      if (!hot) continue;
      if (n + __builtin_popcount(hot) > max_hot) return false;
      for (; hot; hot &= hot - 1) hot_k[n++] = static_cast<uint16_t>(k + __builtin_ctz(hot));
    }
    // The rest (kp is a multiple of 4) 16, 8 and 4 bytes at a time.
    for (int64_t step : {16, 8, 4}) {
      if (k + step > kp) continue;
      __m128i v = _mm_setzero_si128();
      std::memcpy(&v, ar + k, static_cast<size_t>(step));
      const __m128i l = _mm_and_si128(v, _mm256_castsi256_si128(low7));
      std::memcpy(lr + k, &l, static_cast<size_t>(step));
      uint32_t hot = static_cast<uint32_t>(_mm_movemask_epi8(v));
      if (n + __builtin_popcount(hot) > max_hot) return false;
      for (; hot; hot &= hot - 1) hot_k[n++] = static_cast<uint16_t>(k + __builtin_ctz(hot));
      k += step;
    }
  }
  hot_start[m] = static_cast<int32_t>(n);
  return true;
}

void qpanel_avx2_split(const uint8_t* lo, int64_t lda, int64_t m, const int8_t* bytes, int64_t kq, int64_t n,
                       const int32_t* hot_start, const uint16_t* hot_k, void* c, int64_t ldc, const QEpilogue& ep) {
  // The high bits: + 128 * b(k, :) for each byte >= 128, from the byte panel the tile has just
  // read (in cache: reading the int16 panel instead missed it, and FF2 of a dynamically quantized
  // bert_like took 1.07-1.17 times the widened kernel's time). Column j's four k of a group are
  // the bytes of its 32-bit lane: k's is shifted to the top, back down with its sign, times 128.
  auto high_bits = [&](int64_t i, int64_t mr, __m256i (*acc)[2]) {
    for (int64_t r = 0; r < mr; ++r) {
      for (int32_t h = hot_start[i + r]; h < hot_start[i + r + 1]; ++h) {
        const int64_t k = hot_k[h];
        const int8_t* p = bytes + (k / 4) * 64;
        const __m128i up = _mm_cvtsi32_si128(static_cast<int>(24 - 8 * (k % 4))), down = _mm_cvtsi32_si128(24);
        const __m256i v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
        const __m256i v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32));
        const __m256i t0 = _mm256_slli_epi32(_mm256_sra_epi32(_mm256_sll_epi32(v0, up), down), 7);
        const __m256i t1 = _mm256_slli_epi32(_mm256_sra_epi32(_mm256_sll_epi32(v1, up), down), 7);
        acc[r][0] = _mm256_add_epi32(acc[r][0], t0);
        acc[r][1] = _mm256_add_epi32(acc[r][1], t1);
      }
    }
  };
  byte_panel(lo, lda, m, bytes, kq, n, c, ldc, ep, high_bits);
}

}  // namespace fusor::int8
