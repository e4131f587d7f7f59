// AVX2 panel kernel for narrow weights: vpmaddubsw (uint8 A x int8 B, pairs of k summed to int16),
// vpmaddwd by ones (int16 pairs to int32) and vpaddd; three instructions per 32 products, two of
// them multiplies, against four for the widened kernel (kernels/int8/qgemm_avx2.cpp). Exact only
// when no pair of products can leave int16: QPackedB chooses this form at packing when every
// pair of k of every column has positive weights summing to at most 128 and negative ones to at
// least -128 (255 * 128 = 32640 <= 32767), which holds for weights in [-64, 64] (ONNX Runtime's
// reduce_range quantization) and fails for most full-range 8-bit weights.
//
// B has the byte layout of the VNNI kernels ([k / 4][16 columns][k % 4]); A is read as it is,
// four bytes of a row per broadcast. Tiles of 5 rows x 16 columns: with six, the ten accumulators'
// two more, the two B vectors, the broadcast, the ones and a product need 17 YMM registers and GCC
// kept an accumulator on the stack (the kernel is bound by its multiplies, two per 32 products,
// at any row count).
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

}  // namespace

void qpanel_avx2_bytes(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                       int64_t ldc, const QEpilogue& ep) {
  constexpr int MR = 5;
  for (int64_t i = 0; i < m; i += MR) {
    const int64_t mr = std::min<int64_t>(MR, m - i);
    const uint8_t* ai = a + i * lda;
    __m256i acc[5][2] = {};  // (every row used is zeroed by byte_rows: this is for the compiler)
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
    qstore_tile_avx2<MR>(ep, i, mr, n, acc, c, ldc);
  }
}

}  // namespace fusor::int8
