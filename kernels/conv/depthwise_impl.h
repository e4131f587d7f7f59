// The depthwise loops, written as plain C++ that the compiler vectorizes for the ISA of the file
// that includes it (after defining FUSOR_SIMD_NS; see kernels/gemm/simd.h for why the namespace).
#pragma once
#include "kernels/conv/depthwise_kernels.h"

namespace fusor::FUSOR_SIMD_NS {

using conv_detail::DwGeom;

// yr[ox] = sum_{r < KH, k < KW} w[r KW + k] * rows[r][ox + off[k]]: all taps of one output row
// in one pass (no reload of yr between taps).
template <int KH, int KW>
void dw_row_all_taps(float* __restrict yr, const float* const* rows, const int64_t* off, const float* w, int64_t n) {
  float wk[KH * KW];
  const float* p[KH * KW];
  for (int r = 0; r < KH; ++r)
    for (int k = 0; k < KW; ++k) {
      wk[r * KW + k] = w[r * KW + k];
      p[r * KW + k] = rows[r] + off[k];
    }
  for (int64_t ox = 0; ox < n; ++ox) {
    float s = 0.0f;
#pragma GCC unroll 25
    for (int t = 0; t < KH * KW; ++t) s += wk[t] * p[t][ox];
    yr[ox] = s;
  }
}

// NCHW, one plane, on a zero-padded copy of the input plane (xp: rows of pw floats starting at
// input (-pad_t, -pad_l)), so every tap is in range. With stride_w 2 each padded row is stored
// deinterleaved (even columns, then odd), so the taps of consecutive outputs are contiguous.
inline void dw_plane_nchw(const float* xp, int64_t pw, const float* w, float* y, const DwGeom& g, float* tmp) {
  int64_t off[16];
  // The same condition as the copy in conv.cpp: kernels up to 16 x 16 take the direct forms.
  const bool small = g.k_w <= 16 && g.k_h <= 16;
  const bool split = small && g.stride_w == 2, direct = small && (g.stride_w == 1 || split);
  const int64_t n_even = (pw + 1) / 2;
  for (int64_t k = 0; k < g.k_w && k < 16; ++k) {
    const int64_t c = k * g.dil_w;
    off[k] = !split ? c : (c % 2 == 0 ? c / 2 : n_even + c / 2);
  }
  const float* rows[16];
  // Narrow planes, stride 1: the plane as one flat row of pitch pw (output (oy, ox) reads
  // xp[(oy + ky d) pw + ox + kx d]), computed in one long vector loop into tmp, then compacted.
  if (g.stride_h == 1 && g.stride_w == 1 && g.out_w < 32 && small && ((g.k_h == 3 && g.k_w == 3) || (g.k_h == 5 && g.k_w == 5))) {
    for (int64_t ky = 0; ky < g.k_h; ++ky) rows[ky] = xp + ky * g.dil_h * pw;
    const int64_t n = (g.out_h - 1) * pw + g.out_w;
    if (g.k_h == 3) dw_row_all_taps<3, 3>(tmp, rows, off, w, n);
    else dw_row_all_taps<5, 5>(tmp, rows, off, w, n);
    for (int64_t oy = 0; oy < g.out_h; ++oy)
      for (int64_t ox = 0; ox < g.out_w; ++ox) y[oy * g.out_w + ox] = tmp[oy * pw + ox];
    return;
  }
  for (int64_t oy = 0; oy < g.out_h; ++oy) {
    float* yr = y + oy * g.out_w;
    for (int64_t ky = 0; ky < g.k_h && ky < 16; ++ky) rows[ky] = xp + (oy * g.stride_h + ky * g.dil_h) * pw;
    if (direct && g.k_h == 3 && g.k_w == 3) {
      dw_row_all_taps<3, 3>(yr, rows, off, w, g.out_w);
    } else if (direct && g.k_h == 5 && g.k_w == 5) {
      dw_row_all_taps<5, 5>(yr, rows, off, w, g.out_w);
    } else if (direct) {
      for (int64_t ox = 0; ox < g.out_w; ++ox) yr[ox] = 0.0f;
      for (int64_t ky = 0; ky < g.k_h; ++ky)
        for (int64_t k = 0; k < g.k_w; ++k) {
          const float wv = w[ky * g.k_w + k];
          const float* __restrict src = rows[ky] + off[k];
          for (int64_t ox = 0; ox < g.out_w; ++ox) yr[ox] += wv * src[ox];
        }
    } else {
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        float s = 0.0f;
        for (int64_t ky = 0; ky < g.k_h; ++ky) {
          const float* xr = xp + (oy * g.stride_h + ky * g.dil_h) * pw;
          for (int64_t k = 0; k < g.k_w; ++k) s += w[ky * g.k_w + k] * xr[ox * g.stride_w + k * g.dil_w];
        }
        yr[ox] = s;
      }
    }
  }
}

// One block of channels of one output pixel: the taps accumulate in a local block the compiler
// keeps in vector registers (kBlock fixed), stored once.
template <int kBlock>
inline void dw_pixel_block(const float* x, const float* w, float* yp, const DwGeom& g, int64_t oy, int64_t ox,
                           int64_t c0, int64_t cn) {
  const int64_t C = g.channels;
  float acc[kBlock];
  for (int c = 0; c < kBlock; ++c) acc[c] = 0.0f;
  for (int64_t ky = 0; ky < g.k_h; ++ky) {
    const int64_t iy = oy * g.stride_h - g.pad_t + ky * g.dil_h;
    if (iy < 0 || iy >= g.in_h) continue;
    for (int64_t kx = 0; kx < g.k_w; ++kx) {
      const int64_t ix = ox * g.stride_w - g.pad_l + kx * g.dil_w;
      if (ix < 0 || ix >= g.in_w) continue;
      const float* __restrict xq = x + (iy * g.in_w + ix) * C + c0;
      const float* __restrict wq = w + (ky * g.k_w + kx) * C + c0;
      if (cn == kBlock) {
        for (int c = 0; c < kBlock; ++c) acc[c] += wq[c] * xq[c];
      } else {
        for (int64_t c = 0; c < cn; ++c) acc[c] += wq[c] * xq[c];
      }
    }
  }
  for (int64_t c = 0; c < cn; ++c) yp[c0 + c] = acc[c];
}

inline void dw_rows_nhwc(const float* x, const float* w, float* y, const DwGeom& g, int64_t oy0, int64_t oy1) {
  constexpr int kBlock = 64;
  const int64_t C = g.channels;
  for (int64_t oy = oy0; oy < oy1; ++oy)
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      float* yp = y + (oy * g.out_w + ox) * C;
      for (int64_t c0 = 0; c0 < C; c0 += kBlock)
        dw_pixel_block<kBlock>(x, w, yp, g, oy, ox, c0, C - c0 < kBlock ? C - c0 : kBlock);
    }
}

}  // namespace fusor::FUSOR_SIMD_NS
