// AVX-512 depthwise int8 convolution: 16 channels per vector, bytes widened to 32 bits and
// multiplied by vpmulld; padded taps add x_zero * w, so the folded zero-point term stays exact.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_*() inside the conversion and min/max intrinsics as
// maybe-uninitialized (as kernels/gemm/simd.h says).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>

#include "kernels/int8/qdepthwise.h"
#include "kernels/int8/qepilogue_avx512.h"

namespace fusor::int8 {

void qdepthwise_avx512(const QDepthwiseArgs& a, int64_t row0, int64_t row1) {
  const Conv2dShape& s = *a.s;
  const int64_t C = s.out_c, nv = (C + 15) / 16;
  const __m512i xz = _mm512_set1_epi32(a.x_zero);
  for (int64_t row = row0; row < row1; ++row) {
    const int64_t n = row / s.out_h, oh = row % s.out_h;
    for (int64_t ow = 0; ow < s.out_w; ++ow) {
      const int64_t pixel = row * s.out_w + ow;
      // Channel blocks of up to 4 vectors share one pass over the taps.
      for (int64_t v0 = 0; v0 < nv; v0 += 4) {
        const int vb = static_cast<int>(std::min<int64_t>(4, nv - v0));
        __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
        __mmask16 mask[4];
        for (int v = 0; v < vb; ++v) {
          const int64_t left = C - (v0 + v) * 16;
          mask[v] = left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
        }
        for (int64_t kh = 0; kh < s.k_h; ++kh) {
          const int64_t ih = oh * s.stride_h - s.pad_t + kh * s.dil_h;
          for (int64_t kw = 0; kw < s.k_w; ++kw) {
            const int64_t iw = ow * s.stride_w - s.pad_l + kw * s.dil_w;
            const int32_t* w = a.weights + (kh * s.k_w + kw) * a.w_stride + v0 * 16;
            const bool inside = ih >= 0 && ih < s.in_h && iw >= 0 && iw < s.in_w;
            const uint8_t* px = inside ? a.x + ((n * s.in_h + ih) * s.in_w + iw) * C + v0 * 16 : nullptr;
            for (int v = 0; v < vb; ++v) {
              const __m512i wv = _mm512_loadu_si512(w + v * 16);
              __m512i xv = xz;
              if (inside) {
                const __m128i b = _mm_maskz_loadu_epi8(mask[v], px + v * 16);
                xv = a.signed_act ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
              }
              acc[v] = _mm512_add_epi32(acc[v], _mm512_mullo_epi32(xv, wv));
            }
          }
        }
        const QEpilogue e = a.ep.offset(pixel, v0 * 16);
        QEpilogueAvx512 ep(e, C - v0 * 16);
        for (int v = 0; v < vb; ++v) ep.load_column(v);
        for (int v = 0; v < vb; ++v) ep.store(acc[v], 0, v, a.y + pixel * C + v0 * 16, C);
      }
    }
  }
}

}  // namespace fusor::int8
