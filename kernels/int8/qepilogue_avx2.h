// The int8 epilogue (kernels/int8/qgemm.h, QEpilogue) on 8 accumulators of a YMM register; for the
// *_avx2.cpp and *_avxvnni.cpp files only (it needs their instruction-set flags). A vector of
// fewer than 8 columns (the panel's edge) is finished in registers and stored element by element.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/int8/qgemm.h"

namespace fusor::int8 {

struct QEpilogueAvx2 {
  static constexpr int kMaxVectors = 2;

  // For n <= 16 columns; the panel kernels then call load_column(0) and load_column(1).
  QEpilogueAvx2(const QEpilogue& e, int64_t n) : ep(e), cols(n) {
    lo = _mm256_set1_ps(static_cast<float>(e.qmin));
    hi = _mm256_set1_ps(static_cast<float>(e.qmax));
    clo = _mm256_set1_ps(static_cast<float>(e.cmin));
    chi = _mm256_set1_ps(static_cast<float>(e.cmax));
    rt = _mm256_set1_ps(e.res_t);
    rz = _mm256_set1_ps(e.res_z);
    rc = _mm256_set1_ps(e.res_c);
    // A float result's clamp activation (None, Relu, Clip) in registers; others element by element.
    act_clamp = e.act_is_clamp();
    const float inf = std::numeric_limits<float>::infinity();
    alo = _mm256_set1_ps(e.act.kind == Activation::Relu ? 0.0f : e.act.kind == Activation::Clip ? e.act.alpha : -inf);
    ahi = _mm256_set1_ps(e.act.kind == Activation::Clip ? e.act.beta : inf);
  }

  void load_column(int v) {
    const int64_t left = cols - 8 * v;
    width[v] = left >= 8 ? 8 : left > 0 ? static_cast<int>(left) : 0;
    off[v] = load_i32(ep.col_offset + 8 * v, width[v]);
    if (ep.row_sums) bz[v] = load_i32(ep.col_bzero + 8 * v, width[v]);
    if (ep.out != QEpilogue::Out::S32) {
      mul[v] = _mm256_castsi256_ps(load_i32(reinterpret_cast<const int32_t*>(ep.mult) + 8 * v, width[v]));
      add[v] = _mm256_castsi256_ps(load_i32(reinterpret_cast<const int32_t*>(ep.add) + 8 * v, width[v]));
    }
    if (v == 1) {
      packs = width[0] == 8 && width[1] == 8 && (ep.out == QEpilogue::Out::U8 || ep.out == QEpilogue::Out::S8) &&
              !ep.row_sums;
      // Rounding before clamping: round(clamp(f)) = clamp(round(f)) for integer bounds, and the
      // packs saturate (int32 -> int16 -> 8 bits), so without a residual the float min/max can go
      // (the bounds, when narrower than the type's, applied to the bytes) as long as vcvtps2dq
      // cannot overflow: |acc + col_offset| < 2^31 (an int32), so |f| < 2^30 when every column's
      // |mult| <= 1/4 and |add| <= 2^28 (requantization multipliers are far smaller).
      direct = false;
      if (packs && !ep.residual) {
        bool small = true;
        for (int j = 0; j < 16; ++j) small = small && std::fabs(ep.mult[j]) <= 0.25f && std::fabs(ep.add[j]) <= 268435456.0f;
        direct = small;
        const bool s8 = ep.out == QEpilogue::Out::S8;
        byte_clamp = s8 ? ep.qmin > -128 || ep.qmax < 127 : ep.qmin > 0 || ep.qmax < 255;
        qlo8 = _mm_set1_epi8(static_cast<char>(ep.qmin));
        qhi8 = _mm_set1_epi8(static_cast<char>(ep.qmax));
      }
    }
  }

  void store(__m256i acc, int64_t r, int v, void* c, int64_t ldc) const {
    const int w = width[v];
    if (w == 0) return;
    __m256i x = _mm256_add_epi32(acc, off[v]);
    if (ep.row_sums) x = _mm256_sub_epi32(x, _mm256_mullo_epi32(bz[v], _mm256_set1_epi32(ep.row_sums[r])));
    const int64_t at = r * ldc + 8 * v;
    if (ep.out == QEpilogue::Out::S32) {
      store_bytes(static_cast<int32_t*>(c) + at, &x, w * 4);
      return;
    }
    __m256 f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(x), mul[v], add[v]);
    if (ep.out == QEpilogue::Out::F32) {
      float* y = static_cast<float*>(c) + at;
      if (act_clamp) f = _mm256_min_ps(_mm256_max_ps(f, alo), ahi);
      if (w == 8) _mm256_storeu_ps(y, f);
      else store_bytes(y, &f, w * 4);
      // (A scalar call per element here cost a dynamically quantized bert_like's FF1, 196,608
      // float outputs, about a quarter of its time.)
      if (!act_clamp)
        for (int j = 0; j < w; ++j) y[j] = apply_activation(ep.act, y[j]);
      return;
    }
    if (ep.residual) {
      const __m256 t = _mm256_round_ps(_mm256_min_ps(_mm256_max_ps(f, clo), chi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      alignas(16) uint8_t rb[16] = {};
      std::memcpy(rb, ep.residual + r * ep.residual_ld + 8 * v, static_cast<size_t>(w));
      const __m128i r8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(rb));
      const __m256i ri = ep.out == QEpilogue::Out::S8 ? _mm256_cvtepi8_epi32(r8) : _mm256_cvtepu8_epi32(r8);
      f = _mm256_fmadd_ps(t, rt, _mm256_fmadd_ps(_mm256_cvtepi32_ps(ri), rz, rc));
    }
    f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
    const __m256i q = _mm256_cvtps_epi32(f);  // rounds to nearest even, as nearbyint in qepilogue_scalar
    const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    const __m128i p8 = ep.out == QEpilogue::Out::S8 ? _mm_packs_epi16(p16, p16) : _mm_packus_epi16(p16, p16);
    uint8_t* y = static_cast<uint8_t*>(c) + at;
    if (w == 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y), p8);
    } else {
      alignas(16) uint8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), p8);
      std::memcpy(y, tmp, static_cast<size_t>(w));
    }
  }

  // Whether store16 may finish both vectors: both full, bytes out, no row sums.
  // Set by load_column(1) (a flag: comparing width[] per tile, GCC stored the two ints and read them
  // back as one eight-byte load, a store-forwarding stall in every tile).
  bool packs16() const { return packs; }
  // Whether store16_direct may replace store16 (set by load_column(1)).
  bool direct16() const { return direct; }
  // store() of vectors 0 and 1 of row r when packs16(), as one 16-byte store (the same arithmetic,
  // the residual's 16 bytes read at once).
  void store16(__m256i acc0, __m256i acc1, int64_t r, void* c, int64_t ldc) const {
    __m128i res = _mm_setzero_si128();
    if (ep.residual) res = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ep.residual + r * ep.residual_ld));
    auto quantize = [&](__m256i acc, int v) {
      __m256 f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc, off[v])), mul[v], add[v]);
      if (ep.residual) {
        const __m256 t = _mm256_round_ps(_mm256_min_ps(_mm256_max_ps(f, clo), chi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m128i r8 = v == 0 ? res : _mm_srli_si128(res, 8);
        const __m256i ri = ep.out == QEpilogue::Out::S8 ? _mm256_cvtepi8_epi32(r8) : _mm256_cvtepu8_epi32(r8);
        f = _mm256_fmadd_ps(t, rt, _mm256_fmadd_ps(_mm256_cvtepi32_ps(ri), rz, rc));
      }
      f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
      return _mm256_cvtps_epi32(f);
    };
    const __m256i q0 = quantize(acc0, 0), q1 = quantize(acc1, 1);
    // packs works within 128-bit lanes: [q0 lo, q1 lo | q0 hi, q1 hi] as int16, put back in order.
    const __m256i p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8);
    const __m128i a = _mm256_castsi256_si128(p16), b = _mm256_extracti128_si256(p16, 1);
    const __m128i p8 = ep.out == QEpilogue::Out::S8 ? _mm_packs_epi16(a, b) : _mm_packus_epi16(a, b);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(c) + r * ldc), p8);
  }

  // store16 when direct16(): no float clamps (load_column's argument), the same bytes.
  void store16_direct(__m256i acc0, __m256i acc1, int64_t r, void* c, int64_t ldc) const {
    const __m256i q0 = _mm256_cvtps_epi32(
        _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc0, off[0])), mul[0], add[0]));
    const __m256i q1 = _mm256_cvtps_epi32(
        _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc1, off[1])), mul[1], add[1]));
    const __m256i p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8);
    const __m128i a = _mm256_castsi256_si128(p16), b = _mm256_extracti128_si256(p16, 1);
    __m128i p8;
    if (ep.out == QEpilogue::Out::S8) {
      p8 = _mm_packs_epi16(a, b);
      if (byte_clamp) p8 = _mm_min_epi8(_mm_max_epi8(p8, qlo8), qhi8);
    } else {
      p8 = _mm_packus_epi16(a, b);
      if (byte_clamp) p8 = _mm_min_epu8(_mm_max_epu8(p8, qlo8), qhi8);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(c) + r * ldc), p8);
  }

  static __m256i load_i32(const int32_t* p, int w) {
    if (w == 8) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    alignas(32) int32_t tmp[8] = {};
    std::memcpy(tmp, p, static_cast<size_t>(w) * 4);
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
  }
  static void store_bytes(void* dst, const void* src, int bytes) { std::memcpy(dst, src, static_cast<size_t>(bytes)); }

  const QEpilogue& ep;
  int64_t cols;
  int width[kMaxVectors] = {};
  __m256i off[kMaxVectors] = {}, bz[kMaxVectors] = {};
  __m256 mul[kMaxVectors] = {}, add[kMaxVectors] = {};
  __m256 lo, hi, clo, chi, rt, rz, rc, alo, ahi;
  bool act_clamp = true;
  bool packs = false;
  bool direct = false, byte_clamp = false;  // store16's rounded-then-saturated form (load_column)
  __m128i qlo8 = _mm_setzero_si128(), qhi8 = _mm_setzero_si128();
};

// The epilogue of a tile of rows [i, i + mr) (mr <= MR) of a panel, acc[r][0..1], through e (made
// once per panel call from the panel's QEpilogue, rows counted from the panel's row 0 at c, ldc
// elements per row): 16 requantized bytes per row in one store where packs16() (store16_direct
// where direct16()), else vector by vector. Loops unrolled completely so that acc stays in
// registers.
// (Three plain loops: folding them into one templated or generic-lambda loop cost the float
// output path, bert_like_dyn's MatMulIntegerToFloat, 2-5%.)
template <int MR>
[[gnu::always_inline]] inline void qstore_tile_avx2(const QEpilogueAvx2& e, int64_t i, int64_t mr,
                                                   const __m256i (*acc)[2], void* c, int64_t ldc) {
  if (e.direct16()) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
      e.store16_direct(acc[r][0], acc[r][1], i + r, c, ldc);
    }
    return;
  }
  if (e.packs16()) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
      e.store16(acc[r][0], acc[r][1], i + r, c, ldc);
    }
    return;
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    if (r >= mr) break;
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) e.store(acc[r][v], i + r, v, c, ldc);
  }
}

// Rows [0, m) of a panel of at most 8 columns (one vector per row) in tiles of MR rows, a last
// shorter tile as tiles of SUB rows and then single ones: rows.template operator()<R>(i, acc)
// computes the R rows from row i into acc[0, R)[0], then after(i, mr, acc) (the listed bytes'
// fixes, or nothing), then the epilogue stores them.
template <int MR, int SUB, class Rows, class After>
[[gnu::always_inline]] inline void qhalf_tiles_avx2(const QEpilogue& ep, int64_t m, int64_t n, void* c, int64_t ldc,
                                                    Rows rows, After after) {
  QEpilogueAvx2 e(ep, n);
  e.load_column(0);
  for (int64_t i = 0; i < m; i += MR) {
    const int64_t mr = std::min<int64_t>(MR, m - i);
    __m256i acc[MR][2];
    if (mr == MR) {
      rows.template operator()<MR>(i, acc);
    } else {
      int64_t r = 0;
      for (; r + SUB <= mr; r += SUB) rows.template operator()<SUB>(i + r, acc + r);
      for (; r < mr; ++r) rows.template operator()<1>(i + r, acc + r);
    }
    after(i, mr, acc);
    for (int64_t r = 0; r < mr; ++r) e.store(acc[r][0], i + r, 0, c, ldc);
  }
}

}  // namespace fusor::int8
