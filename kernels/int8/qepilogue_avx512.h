// The int8 epilogue (kernels/int8/qgemm.h, QEpilogue) on 16 accumulators of a ZMM register; for
// the *_avx512vnni.cpp files only (it needs their instruction-set flags).
//
// Clamping happens in float before the conversion (the bounds are integers, so round(clamp(f)) is
// clamp(round(f)), and out-of-range values cannot turn into the conversion's INT_MIN).
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "kernels/int8/qgemm.h"

namespace fusor::int8 {

struct QEpilogueAvx512 {
  static constexpr int kMaxVectors = 4;

  QEpilogueAvx512(const QEpilogue& e, int64_t n) : ep(e), cols(n) {
    lo = _mm512_set1_ps(static_cast<float>(e.qmin));
    hi = _mm512_set1_ps(static_cast<float>(e.qmax));
    clo = _mm512_set1_ps(static_cast<float>(e.cmin));
    chi = _mm512_set1_ps(static_cast<float>(e.cmax));
    rt = _mm512_set1_ps(e.res_t);
    rz = _mm512_set1_ps(e.res_z);
    rc = _mm512_set1_ps(e.res_c);
    if (e.out == QEpilogue::Out::F32 && e.act_is_clamp()) {
      flo = _mm512_set1_ps(e.act.kind == Activation::None ? -3.0e38f : e.act.kind == Activation::Relu ? 0.0f : e.act.alpha);
      fhi = _mm512_set1_ps(e.act.kind == Activation::Clip ? e.act.beta : 3.0e38f);
    }
  }

  // Column constants of vector v (columns 16v .. 16v + 15 of the call).
  __attribute__((always_inline)) void load_column(int v) {
    const int64_t left = cols - 16 * v;
    mask[v] = left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (left > 0 ? left : 0)) - 1);
    off[v] = _mm512_maskz_loadu_epi32(mask[v], ep.col_offset + 16 * v);
    if (ep.row_sums) bz[v] = _mm512_maskz_loadu_epi32(mask[v], ep.col_bzero + 16 * v);
    if (ep.out != QEpilogue::Out::S32) {
      mul[v] = _mm512_maskz_loadu_ps(mask[v], ep.mult + 16 * v);
      add[v] = _mm512_maskz_loadu_ps(mask[v], ep.add + 16 * v);
    }
  }

  // Row r of the call, vector v: finishes and stores acc.
  __attribute__((always_inline)) void store(__m512i acc, int64_t r, int v, void* c, int64_t ldc) const {
    __m512i x = _mm512_add_epi32(acc, off[v]);
    if (ep.row_sums) x = _mm512_sub_epi32(x, _mm512_mullo_epi32(bz[v], _mm512_set1_epi32(ep.row_sums[r])));
    const int64_t at = r * ldc + 16 * v;
    if (ep.out == QEpilogue::Out::S32) {
      _mm512_mask_storeu_epi32(static_cast<int32_t*>(c) + at, mask[v], x);
      return;
    }
    __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(x), mul[v], add[v]);
    if (ep.out == QEpilogue::Out::F32) {
      float* y = static_cast<float*>(c) + at;
      if (ep.act_is_clamp()) {
        _mm512_mask_storeu_ps(y, mask[v], _mm512_min_ps(_mm512_max_ps(f, flo), fhi));
      } else {
        _mm512_mask_storeu_ps(y, mask[v], f);
        const int64_t n = cols - 16 * v < 16 ? cols - 16 * v : 16;
        for (int64_t j = 0; j < n; ++j) y[j] = apply_activation(ep.act, y[j]);
      }
      return;
    }
    if (ep.residual) {
      const __m512 t = _mm512_roundscale_ps(_mm512_min_ps(_mm512_max_ps(f, clo), chi), _MM_FROUND_TO_NEAREST_INT);
      const __m128i rb = _mm_maskz_loadu_epi8(mask[v], ep.residual + r * ep.residual_ld + 16 * v);
      const __m512i ri = ep.out == QEpilogue::Out::S8 ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb);
      f = _mm512_fmadd_ps(t, rt, _mm512_fmadd_ps(_mm512_cvtepi32_ps(ri), rz, rc));
    }
    f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
    const __m512i q = _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_mask_cvtepi32_storeu_epi8(static_cast<uint8_t*>(c) + at, mask[v], q);
  }

  const QEpilogue& ep;
  int64_t cols;
  __mmask16 mask[kMaxVectors] = {};
  __m512i off[kMaxVectors] = {}, bz[kMaxVectors] = {};
  __m512 mul[kMaxVectors] = {}, add[kMaxVectors] = {};
  __m512 lo, hi, clo, chi, rt, rz, rc, flo = _mm512_setzero_ps(), fhi = _mm512_setzero_ps();
};

}  // namespace fusor::int8
