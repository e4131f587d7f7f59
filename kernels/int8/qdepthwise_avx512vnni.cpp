// AVX-512 depthwise int8 convolution: 16 channels per vector, up to 4 vectors per pass over an
// output row. Each tap is one vpdpwssd per vector: the input bytes zero-extended to 32-bit lanes
// (high halves 0) against the int32 weights (|w| <= 255), so a lane gets exactly x * w. int8
// inputs are moved to uint8 by flipping the sign bit (x + 128; the zero point with them), and
// -128 * sum_t w starts the accumulator.
//
// An output row is split where the window leaves the input: pixels whose taps are all inside
// horizontally run in tiles of P pixels (P x VB accumulators in registers, each tap's weight
// vectors loaded once for the tile), with the kernel rows above or below the input folded into
// the starting value (they read the zero point); the few border pixels check every tap.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_*() inside the conversion and min/max intrinsics as
// maybe-uninitialized (as kernels/gemm/simd.h says).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>

#include "kernels/int8/qdepthwise.h"
#include "kernels/int8/qepilogue_avx512.h"

namespace fusor::int8 {
namespace {

// The 16 input bytes at px as uint8 values in 32-bit lanes. A full vector: the bytes broadcast to
// the four 128-bit lanes and spread by vpshufb (in-lane, cheap; vpmovzxbd to ZMM crosses lanes and
// is the slow part on this core). A partial one (the last vector of a channel count that is not a
// multiple of 16): a masked load, so nothing past the tensor is read.
template <bool SIGNED, bool FULL>
inline __m512i load_x(const uint8_t* px, __mmask16 mask) {
  if constexpr (FULL) {
    const __m512i spread = _mm512_set_epi32(
        -1 << 8 | 15, -1 << 8 | 14, -1 << 8 | 13, -1 << 8 | 12, -1 << 8 | 11, -1 << 8 | 10, -1 << 8 | 9, -1 << 8 | 8,
        -1 << 8 | 7, -1 << 8 | 6, -1 << 8 | 5, -1 << 8 | 4, -1 << 8 | 3, -1 << 8 | 2, -1 << 8 | 1, -1 << 8 | 0);
    __m512i b = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(px)));
    if constexpr (SIGNED) b = _mm512_xor_si512(b, _mm512_set1_epi8(static_cast<char>(0x80)));
    return _mm512_shuffle_epi8(b, spread);
  } else {
    __m128i b = _mm_maskz_loadu_epi8(mask, px);
    if constexpr (SIGNED) b = _mm_xor_si128(b, _mm_set1_epi8(static_cast<char>(0x80)));
    return _mm512_cvtepu8_epi32(b);
  }
}

// What one output row of one channel block needs.
struct RowCtx {
  const QDepthwiseArgs* a;
  const QEpilogueAvx512* e;
  int64_t n, oh, c0, pixel0;
  __m512i xz;  // the zero point in the uint8 domain, one per 32-bit lane
};

// P pixels from ow0 whose taps are all inside horizontally; start: the accumulator's starting
// value per vector (the signed correction and the kernel rows outside the input).
template <int P, int VB, bool SIGNED, bool FULL>
void interior_tile(const RowCtx& r, int64_t ow0, const int64_t* kh_in, int nkh, const __m512i* start) {
  const QDepthwiseArgs& a = *r.a;
  const Conv2dShape& s = *a.s;
  const int64_t C = s.out_c, step = s.stride_w * C;
  __m512i acc[P][VB];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < VB; ++v) acc[p][v] = start[v];
  for (int i = 0; i < nkh; ++i) {
    const int64_t kh = kh_in[i], ih = r.oh * s.stride_h - s.pad_t + kh * s.dil_h;
    const uint8_t* xrow = a.x + (r.n * s.in_h + ih) * s.in_w * C + r.c0;
    const int32_t* wrow = a.weights + kh * s.k_w * a.w_stride + r.c0;
    for (int64_t kw = 0; kw < s.k_w; ++kw) {
      __m512i w[VB];
#pragma GCC unroll 4
      for (int v = 0; v < VB; ++v) w[v] = _mm512_loadu_si512(wrow + kw * a.w_stride + 16 * v);
      const uint8_t* px = xrow + (ow0 * s.stride_w - s.pad_l + kw * s.dil_w) * C;
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v)
          acc[p][v] = _mm512_dpwssd_epi32(acc[p][v], load_x<SIGNED, FULL>(px + p * step + 16 * v, r.e->mask[v]), w[v]);
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < VB; ++v) r.e->store(acc[p][v], r.pixel0 + ow0 + p, v, a.y + r.c0 * a.ep.out_bytes(), C);
}

// One pixel, every tap checked.
template <int VB, bool SIGNED, bool FULL>
void border_pixel(const RowCtx& r, int64_t ow, const __m512i* corr) {
  const QDepthwiseArgs& a = *r.a;
  const Conv2dShape& s = *a.s;
  const int64_t C = s.out_c;
  __m512i acc[VB];
#pragma GCC unroll 4
  for (int v = 0; v < VB; ++v) acc[v] = corr[v];
  for (int64_t kh = 0; kh < s.k_h; ++kh) {
    const int64_t ih = r.oh * s.stride_h - s.pad_t + kh * s.dil_h;
    const bool row_inside = ih >= 0 && ih < s.in_h;
    for (int64_t kw = 0; kw < s.k_w; ++kw) {
      const int64_t iw = ow * s.stride_w - s.pad_l + kw * s.dil_w;
      const int32_t* w = a.weights + (kh * s.k_w + kw) * a.w_stride + r.c0;
      if (row_inside && iw >= 0 && iw < s.in_w) {
        const uint8_t* px = a.x + ((r.n * s.in_h + ih) * s.in_w + iw) * C + r.c0;
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v)
          acc[v] = _mm512_dpwssd_epi32(acc[v], load_x<SIGNED, FULL>(px + 16 * v, r.e->mask[v]), _mm512_loadu_si512(w + 16 * v));
      } else {
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v) acc[v] = _mm512_dpwssd_epi32(acc[v], r.xz, _mm512_loadu_si512(w + 16 * v));
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < VB; ++v) r.e->store(acc[v], r.pixel0 + ow, v, a.y + r.c0 * a.ep.out_bytes(), C);
}

template <int VB, bool SIGNED, bool FULL>
void row_block(const RowCtx& r) {
  constexpr int P = VB >= 3 ? 4 : 8;
  const QDepthwiseArgs& a = *r.a;
  const Conv2dShape& s = *a.s;
  // corr: -128 * sum_t w for int8 inputs (their +128); start adds xz * w of the kernel rows
  // outside the input.
  __m512i corr[VB], start[VB];
  int64_t kh_in[64];
  int nkh = 0;
#pragma GCC unroll 4
  for (int v = 0; v < VB; ++v) corr[v] = start[v] = _mm512_setzero_si512();
  for (int64_t kh = 0; kh < s.k_h; ++kh) {
    const int64_t ih = r.oh * s.stride_h - s.pad_t + kh * s.dil_h;
    const bool inside = ih >= 0 && ih < s.in_h;
    if (inside) {
      if (nkh < 64) kh_in[nkh] = kh;
      ++nkh;
    }
    for (int64_t kw = 0; kw < s.k_w; ++kw) {
      const int32_t* w = a.weights + (kh * s.k_w + kw) * a.w_stride + r.c0;
#pragma GCC unroll 4
      for (int v = 0; v < VB; ++v) {
        const __m512i wv = _mm512_loadu_si512(w + 16 * v);
        if (SIGNED) corr[v] = _mm512_sub_epi32(corr[v], _mm512_slli_epi32(wv, 7));
        if (!inside) start[v] = _mm512_dpwssd_epi32(start[v], r.xz, wv);
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < VB; ++v) start[v] = _mm512_add_epi32(start[v], corr[v]);
  // Pixels [lo, hi) have every tap inside horizontally.
  const int64_t reach = (s.k_w - 1) * s.dil_w;
  int64_t lo = (s.pad_l + s.stride_w - 1) / s.stride_w;
  int64_t hi = s.in_w - 1 + s.pad_l - reach >= 0 ? (s.in_w - 1 + s.pad_l - reach) / s.stride_w + 1 : 0;
  lo = std::min(lo, s.out_w);
  hi = std::clamp(hi, lo, s.out_w);
  if (nkh > 64) hi = lo;  // kernels taller than 64 rows: every pixel on the checked path
  for (int64_t ow = 0; ow < lo; ++ow) border_pixel<VB, SIGNED, FULL>(r, ow, corr);
  int64_t ow = lo;
  for (; ow + P <= hi; ow += P) interior_tile<P, VB, SIGNED, FULL>(r, ow, kh_in, nkh, start);
  for (; ow < hi; ++ow) interior_tile<1, VB, SIGNED, FULL>(r, ow, kh_in, nkh, start);
  for (; ow < s.out_w; ++ow) border_pixel<VB, SIGNED, FULL>(r, ow, corr);
}

template <bool SIGNED>
void row(const QDepthwiseArgs& a, int64_t n, int64_t oh, int64_t pixel0) {
  const int64_t C = a.s->out_c, nv = (C + 15) / 16;
  for (int64_t v0 = 0; v0 < nv; v0 += 4) {
    const int vb = static_cast<int>(std::min<int64_t>(4, nv - v0));
    const QEpilogue ep = a.ep.offset(0, v0 * 16);
    QEpilogueAvx512 e(ep, C - v0 * 16);
    for (int v = 0; v < vb; ++v) e.load_column(v);
    const RowCtx r{&a, &e, n, oh, v0 * 16, pixel0, _mm512_set1_epi32(a.x_zero + (SIGNED ? 128 : 0))};
    const bool full = e.mask[vb - 1] == 0xffff;  // else the last vector is partial
    switch (vb * 2 + (full ? 1 : 0)) {
      case 9: row_block<4, SIGNED, true>(r); break;
      case 8: row_block<4, SIGNED, false>(r); break;
      case 7: row_block<3, SIGNED, true>(r); break;
      case 6: row_block<3, SIGNED, false>(r); break;
      case 5: row_block<2, SIGNED, true>(r); break;
      case 4: row_block<2, SIGNED, false>(r); break;
      case 3: row_block<1, SIGNED, true>(r); break;
      default: row_block<1, SIGNED, false>(r); break;
    }
  }
}

}  // namespace

void qdepthwise_avx512(const QDepthwiseArgs& a, int64_t row0, int64_t row1) {
  const Conv2dShape& s = *a.s;
  for (int64_t r = row0; r < row1; ++r) {
    const int64_t n = r / s.out_h, oh = r % s.out_h;
    if (a.signed_act) {
      row<true>(a, n, oh, r * s.out_w);
    } else {
      row<false>(a, n, oh, r * s.out_w);
    }
  }
}

}  // namespace fusor::int8
