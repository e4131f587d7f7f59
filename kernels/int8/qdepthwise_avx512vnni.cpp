// AVX-512 depthwise int8 convolution: 16 channels per vector, up to 4 vectors per pass over the
// taps with the accumulators in registers (the vector count is a template parameter), the
// epilogue's per-channel constants loaded once per output row and channel block. uint8 inputs
// are multiplied with vpmaddwd (zero-extended bytes against weights of at most 9 bits: the high
// halves are zero, so each lane is the exact product); int8 inputs with vpmulld. Padded taps add
// x_zero * w, so the folded zero-point term stays exact.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_*() inside the conversion and min/max intrinsics as
// maybe-uninitialized (as kernels/gemm/simd.h says).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>

#include "kernels/int8/qdepthwise.h"
#include "kernels/int8/qepilogue_avx512.h"

namespace fusor::int8 {
namespace {

// Output row (n, oh), channels [c0, c0 + 16 * VB) (the last vector masked by e.mask).
template <int VB, bool SIGNED>
void row_block(const QDepthwiseArgs& a, int64_t n, int64_t oh, int64_t c0, const QEpilogueAvx512& e,
               int64_t pixel0) {
  const Conv2dShape& s = *a.s;
  const int64_t C = s.out_c;
  const __m512i xz = _mm512_set1_epi32(a.x_zero);
  for (int64_t ow = 0; ow < s.out_w; ++ow) {
    __m512i acc[VB];
    for (int v = 0; v < VB; ++v) acc[v] = _mm512_setzero_si512();
    for (int64_t kh = 0; kh < s.k_h; ++kh) {
      const int64_t ih = oh * s.stride_h - s.pad_t + kh * s.dil_h;
      const bool row_inside = ih >= 0 && ih < s.in_h;
      const uint8_t* xrow = row_inside ? a.x + (n * s.in_h + ih) * s.in_w * C + c0 : a.x;
      const int32_t* wrow = a.weights + kh * s.k_w * a.w_stride + c0;
      for (int64_t kw = 0; kw < s.k_w; ++kw) {
        const int64_t iw = ow * s.stride_w - s.pad_l + kw * s.dil_w;
        const int32_t* w = wrow + kw * a.w_stride;
        if (row_inside && iw >= 0 && iw < s.in_w) {
          const uint8_t* px = xrow + iw * C;
          for (int v = 0; v < VB; ++v) {
            const __m128i b = _mm_maskz_loadu_epi8(e.mask[v], px + 16 * v);
            const __m512i wv = _mm512_loadu_si512(w + 16 * v);
            if constexpr (SIGNED) {
              acc[v] = _mm512_add_epi32(acc[v], _mm512_mullo_epi32(_mm512_cvtepi8_epi32(b), wv));
            } else {
              acc[v] = _mm512_add_epi32(acc[v], _mm512_madd_epi16(_mm512_cvtepu8_epi32(b), wv));
            }
          }
        } else {
          for (int v = 0; v < VB; ++v)
            acc[v] = _mm512_add_epi32(acc[v], _mm512_mullo_epi32(xz, _mm512_loadu_si512(w + 16 * v)));
        }
      }
    }
    for (int v = 0; v < VB; ++v) e.store(acc[v], pixel0 + ow, v, a.y + c0, C);
  }
}

template <bool SIGNED>
void row(const QDepthwiseArgs& a, int64_t n, int64_t oh, int64_t pixel0) {
  const int64_t C = a.s->out_c, nv = (C + 15) / 16;
  for (int64_t v0 = 0; v0 < nv; v0 += 4) {
    const int vb = static_cast<int>(std::min<int64_t>(4, nv - v0));
    const QEpilogue ep = a.ep.offset(0, v0 * 16);
    QEpilogueAvx512 e(ep, C - v0 * 16);
    for (int v = 0; v < vb; ++v) e.load_column(v);
    switch (vb) {
      case 4: row_block<4, SIGNED>(a, n, oh, v0 * 16, e, pixel0); break;
      case 3: row_block<3, SIGNED>(a, n, oh, v0 * 16, e, pixel0); break;
      case 2: row_block<2, SIGNED>(a, n, oh, v0 * 16, e, pixel0); break;
      default: row_block<1, SIGNED>(a, n, oh, v0 * 16, e, pixel0); break;
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
