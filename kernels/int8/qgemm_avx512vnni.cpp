// AVX512-VNNI panel kernel: tiles of MR rows x NV vectors of 16 columns, vpdpbusd with the row's 4
// A bytes broadcast against 16 columns x 4 k of B; the epilogue on the accumulators in registers.
// Tile shapes keep 24 accumulators (NV 4: 6 rows, 3: 8, 2: 12, 1: 16 accumulators in 16 rows);
// with NV 4 the last 1-4 rows get a tile of their own height.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_*() inside the conversion and min/max intrinsics as
// maybe-uninitialized (as kernels/gemm/simd.h says).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstring>

#include "kernels/int8/qepilogue_avx512.h"
#include "kernels/int8/qgemm_kernels.h"

namespace fusor::int8 {
namespace {

// Every loop over the tile is unrolled completely (the pragmas), so the accumulators live in
// registers: without them GCC keeps acc[][] in a stack array as well and stores all of it on
// every k step, which halves the rate.
template <int MR, int NV>
void tile(const uint8_t* a, int64_t lda, int64_t m, const int8_t* bp, int64_t kq, int64_t w, int64_t n, void* c,
          int64_t ldc, const QEpilogue& ep) {
  __m512i acc[MR][NV];
  const uint8_t* ar[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    ar[r] = a + std::min<int64_t>(r, m - 1) * lda;  // rows past m repeat the last one (not stored)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_si512();
  }
  const int64_t bstep = w * 4;
  for (int64_t q = 0; q < kq; ++q) {
    __m512i b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = _mm512_load_si512(bp + q * bstep + v * 64);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      int32_t x;
      std::memcpy(&x, ar[r] + q * 4, 4);
      const __m512i bc = _mm512_set1_epi32(x);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], bc, b[v]);
    }
  }
  QEpilogueAvx512 e(ep, n);
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) e.load_column(v);
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (r < m) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) e.store(acc[r][v], r, v, c, ldc);
    }
  }
}

template <int MR, int NV>
void rows(const uint8_t* a, int64_t lda, int64_t m, const int8_t* bp, int64_t kq, int64_t w, int64_t n, void* c,
          int64_t ldc, const QEpilogue& ep) {
  const size_t esize = ep.out == QEpilogue::Out::U8 || ep.out == QEpilogue::Out::S8 ? 1 : 4;
  auto at = [&](int64_t i) { return static_cast<char*>(c) + i * ldc * static_cast<int64_t>(esize); };
  int64_t i = 0;
  for (; i + MR <= m; i += MR) tile<MR, NV>(a + i * lda, lda, MR, bp, kq, w, n, at(i), ldc, ep.offset(i, 0));
  if (i == m) return;
  // The last rows: with 4 vectors a tile of their own height (a 7x7 map's 49 rows would
  // otherwise compute 54), else a full tile that repeats the last row.
  const int64_t left = m - i;
  if constexpr (NV == 4) {
    switch (left) {
      case 1: return tile<1, NV>(a + i * lda, lda, 1, bp, kq, w, n, at(i), ldc, ep.offset(i, 0));
      case 2: return tile<2, NV>(a + i * lda, lda, 2, bp, kq, w, n, at(i), ldc, ep.offset(i, 0));
      case 3: return tile<3, NV>(a + i * lda, lda, 3, bp, kq, w, n, at(i), ldc, ep.offset(i, 0));
      case 4: return tile<4, NV>(a + i * lda, lda, 4, bp, kq, w, n, at(i), ldc, ep.offset(i, 0));
      default: break;
    }
  }
  tile<MR, NV>(a + i * lda, lda, left, bp, kq, w, n, at(i), ldc, ep.offset(i, 0));
}

}  // namespace

void qpanel_avx512vnni(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                       int64_t ldc, const QEpilogue& ep) {
  const int64_t nv = (n + 15) / 16, w = nv * 16;
  switch (nv) {
    case 4: rows<6, 4>(a, lda, m, panel, kq, w, n, c, ldc, ep); break;
    case 3: rows<8, 3>(a, lda, m, panel, kq, w, n, c, ldc, ep); break;
    case 2: rows<12, 2>(a, lda, m, panel, kq, w, n, c, ldc, ep); break;
    default: rows<16, 1>(a, lda, m, panel, kq, w, n, c, ldc, ep); break;
  }
}

}  // namespace fusor::int8
