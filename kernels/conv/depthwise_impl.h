// The depthwise loops, written as plain C++ that the compiler vectorizes for the ISA of the file
// that includes it (after defining FUSOR_SIMD_NS; see kernels/gemm/simd.h for why the namespace).
#pragma once
#include "kernels/conv/depthwise_kernels.h"

namespace fusor::FUSOR_SIMD_NS {

using conv_detail::DwGeom;

inline int64_t dw_floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Output columns whose taps kx = 0..k_w-1 all fall inside the row: [lo, hi).
inline void dw_interior(const DwGeom& g, int64_t* lo, int64_t* hi) {
  const int64_t first = g.pad_l <= 0 ? 0 : (g.pad_l + g.stride_w - 1) / g.stride_w;
  const int64_t last = dw_floor_div(g.in_w - 1 - (g.k_w - 1) * g.dil_w + g.pad_l, g.stride_w);
  *lo = first;
  *hi = last + 1 < g.out_w ? last + 1 : g.out_w;
  if (*hi < *lo) *hi = *lo;
}

// yr[ox] += sum_kx w[kx] * xr[ox * SW + kx * dil - pad_l] over the interior, taps unrolled.
template <int KW, int SW>
void dw_row_interior(float* __restrict yr, const float* __restrict xr, const float* w, int64_t lo, int64_t hi,
                     int64_t dil, int64_t pad_l) {
  float wk[KW];
  for (int k = 0; k < KW; ++k) wk[k] = w[k];
  const float* base = xr - pad_l;
  for (int64_t ox = lo; ox < hi; ++ox) {
    float s = yr[ox];
#pragma GCC unroll 8
    for (int k = 0; k < KW; ++k) s += wk[k] * base[ox * SW + k * dil];
    yr[ox] = s;
  }
}

inline void dw_row_interior_any(float* yr, const float* xr, const float* w, int64_t kw, int64_t sw, int64_t lo,
                                int64_t hi, int64_t dil, int64_t pad_l) {
  for (int64_t k = 0; k < kw; ++k) {
    const float wv = w[k];
    const float* base = xr - pad_l + k * dil;
    for (int64_t ox = lo; ox < hi; ++ox) yr[ox] += wv * base[ox * sw];
  }
}

inline void dw_plane_nchw(const float* x, const float* w, float* y, const DwGeom& g) {
  int64_t lo, hi;
  dw_interior(g, &lo, &hi);
  for (int64_t oy = 0; oy < g.out_h; ++oy) {
    float* yr = y + oy * g.out_w;
    for (int64_t ox = 0; ox < g.out_w; ++ox) yr[ox] = 0.0f;
    for (int64_t ky = 0; ky < g.k_h; ++ky) {
      const int64_t iy = oy * g.stride_h - g.pad_t + ky * g.dil_h;
      if (iy < 0 || iy >= g.in_h) continue;
      const float* xr = x + iy * g.in_w;
      const float* wr = w + ky * g.k_w;
      // Edges: bounds-checked taps.
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        if (ox == lo) ox = hi;
        if (ox >= g.out_w) break;
        float s = yr[ox];
        for (int64_t kx = 0; kx < g.k_w; ++kx) {
          const int64_t ix = ox * g.stride_w - g.pad_l + kx * g.dil_w;
          if (ix >= 0 && ix < g.in_w) s += wr[kx] * xr[ix];
        }
        yr[ox] = s;
      }
      if (lo >= hi) continue;
      if (g.k_w == 3 && g.stride_w == 1) dw_row_interior<3, 1>(yr, xr, wr, lo, hi, g.dil_w, g.pad_l);
      else if (g.k_w == 3 && g.stride_w == 2) dw_row_interior<3, 2>(yr, xr, wr, lo, hi, g.dil_w, g.pad_l);
      else if (g.k_w == 5 && g.stride_w == 1) dw_row_interior<5, 1>(yr, xr, wr, lo, hi, g.dil_w, g.pad_l);
      else if (g.k_w == 5 && g.stride_w == 2) dw_row_interior<5, 2>(yr, xr, wr, lo, hi, g.dil_w, g.pad_l);
      else dw_row_interior_any(yr, xr, wr, g.k_w, g.stride_w, lo, hi, g.dil_w, g.pad_l);
    }
  }
}

inline void dw_rows_nhwc(const float* x, const float* w, float* y, const DwGeom& g, int64_t oy0, int64_t oy1) {
  const int64_t C = g.channels;
  for (int64_t oy = oy0; oy < oy1; ++oy)
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      float* __restrict yp = y + (oy * g.out_w + ox) * C;
      for (int64_t c = 0; c < C; ++c) yp[c] = 0.0f;
      for (int64_t ky = 0; ky < g.k_h; ++ky) {
        const int64_t iy = oy * g.stride_h - g.pad_t + ky * g.dil_h;
        if (iy < 0 || iy >= g.in_h) continue;
        for (int64_t kx = 0; kx < g.k_w; ++kx) {
          const int64_t ix = ox * g.stride_w - g.pad_l + kx * g.dil_w;
          if (ix < 0 || ix >= g.in_w) continue;
          const float* __restrict xp = x + (iy * g.in_w + ix) * C;
          const float* __restrict wp = w + (ky * g.k_w + kx) * C;
          for (int64_t c = 0; c < C; ++c) yp[c] += wp[c] * xp[c];
        }
      }
    }
}

}  // namespace fusor::FUSOR_SIMD_NS
