// AVX-512 loops of kernels/int8/qelementwise.h, 16 elements per step; the tail with masks.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_*() inside the conversion and min/max intrinsics as
// maybe-uninitialized (as kernels/gemm/simd.h says).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// The same placeholders inside the min/max reductions warn as -Wuninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <cmath>

#include "kernels/int8/qelementwise.h"

namespace fusor::int8 {
namespace {

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
}

inline __m512 load16(const uint8_t* p, int64_t stride, __mmask16 m, bool s) {
  if (stride == 0) return _mm512_set1_ps(s ? static_cast<float>(static_cast<int8_t>(*p)) : static_cast<float>(*p));
  const __m128i b = _mm_maskz_loadu_epi8(m, p);
  return _mm512_cvtepi32_ps(s ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b));
}

inline void store16(uint8_t* y, __m512 f, __m512 lo, __m512 hi, __mmask16 m) {
  f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
  _mm512_mask_cvtepi32_storeu_epi8(y, m, _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

}  // namespace

void qbinary_run_avx512(const QBinaryConsts& q, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* y,
                        int64_t n) {
  const __m512 lo = _mm512_set1_ps(q.lo), hi = _mm512_set1_ps(q.hi);
  const __m512 ka = _mm512_set1_ps(q.ka), kb = _mm512_set1_ps(q.kb), c = _mm512_set1_ps(q.c), k = _mm512_set1_ps(q.k);
  const __m512 za = _mm512_set1_ps(q.za), zb = _mm512_set1_ps(q.zb), zy = _mm512_set1_ps(q.zy);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 av = load16(a + i * sa, sa, m, q.is_signed), bv = load16(b + i * sb, sb, m, q.is_signed);
    const __m512 f = q.mul ? _mm512_fmadd_ps(_mm512_mul_ps(_mm512_sub_ps(av, za), _mm512_sub_ps(bv, zb)), k, zy)
                           : _mm512_fmadd_ps(av, ka, _mm512_fmadd_ps(bv, kb, c));
    store16(y + i, f, lo, hi, m);
  }
}

void quantize_run_avx512(const float* x, float scale, int32_t zero_point, bool is_signed, uint8_t* y, int64_t n) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(static_cast<float>(zero_point));
  const __m512 lo = _mm512_set1_ps(is_signed ? -128.0f : 0.0f), hi = _mm512_set1_ps(is_signed ? 127.0f : 255.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), s);
    __m512 r = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(r, r, _CMP_ORD_Q), r);  // NaN -> 0, as the scalar loop
    store16(y + i, _mm512_add_ps(r, z), lo, hi, m);
  }
}

bool minmax_run_avx512(const float* x, int64_t n, float& lo, float& hi) {
  // _mm512_min_ps(v, acc) is v < acc ? v : acc, std::min(acc, v) of the scalar loop: a NaN v
  // leaves acc as it is. Lanes past n load as 0, which the accumulators (starting at lo <= 0 <= hi
  // for DynamicQuantizeLinear, in general at lo and hi) must not see: they are masked.
  __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  __mmask16 nan = 0;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    vlo = _mm512_mask_min_ps(vlo, m, v, vlo);
    vhi = _mm512_mask_max_ps(vhi, m, v, vhi);
    nan |= _mm512_mask_cmp_ps_mask(m, v, v, _CMP_UNORD_Q);
  }
  lo = _mm512_reduce_min_ps(vlo);
  hi = _mm512_reduce_max_ps(vhi);
  return nan != 0;
}

void dequantize_run_avx512(const uint8_t* x, bool is_signed, float scale, int32_t zero_point, float* y, int64_t n) {
  const __m512 s = _mm512_set1_ps(scale);
  const __m512i z = _mm512_set1_epi32(zero_point);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m128i b = _mm_maskz_loadu_epi8(m, x + i);
    const __m512i v = _mm512_sub_epi32(is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b), z);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(v), s));
  }
}

}  // namespace fusor::int8
