// Vector types for the per-ISA kernel files. Include only from *_avx512.cpp / *_avx2.cpp /
// *_scalar.cpp, after defining FUSOR_SIMD_NS (the namespace that keeps each ISA's inline code
// apart, so the linker never mixes an AVX-512 copy of a function into the baseline path).
//
// Each type V provides: reg, kWidth, zero, set1, load, store, load_n/store_n (the first n lanes,
// n < kWidth, others untouched / zero), add, sub, mul, fma(a, b, c) = a * b + c, max, min, abs,
// copysign, lt_select(a, b, x, y) = a < b ? x : y, exp, div_pos(a, b) = a / b for b >= 1 (a
// reciprocal estimate and a Newton step on AVX-512, a division elsewhere), and the horizontal hmax / hsum of a
// register's lanes (a shuffle tree: no store and reload).
#pragma once
#if !defined(FUSOR_SIMD_NS)
#error "define FUSOR_SIMD_NS before including kernels/gemm/simd.h"
#endif
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_ps() inside the max/min intrinsics as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)  // clang has no such warning, and warns of the pragma
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cmath>
#include <cstdint>

namespace fusor::FUSOR_SIMD_NS {

// exp(x) for x clamped to [-87.3, 88.7]: 2^n * p(r), r = x - n ln2, |r| <= ln2 / 2, p of degree 6
// (relative error about 2e-7). The clamp keeps NaN (max and min return their second operand when
// one is NaN), so NaN in gives NaN out, not exp of a bound.
#define FUSOR_EXP_BODY(V, x)                                                               \
  x = V::min(V::set1(88.7f), V::max(V::set1(-87.3f), x));                                  \
  reg n = V::round(V::mul(x, V::set1(1.44269504088896341f)));                              \
  reg r = V::fma(n, V::set1(-0.693145751953125f), x);                                      \
  r = V::fma(n, V::set1(-1.428606765330187045e-06f), r);                                   \
  reg p = V::set1(1.0f / 720);                                                             \
  p = V::fma(p, r, V::set1(1.0f / 120));                                                   \
  p = V::fma(p, r, V::set1(1.0f / 24));                                                    \
  p = V::fma(p, r, V::set1(1.0f / 6));                                                     \
  p = V::fma(p, r, V::set1(0.5f));                                                         \
  p = V::fma(p, r, V::set1(1.0f));                                                         \
  p = V::fma(p, r, V::set1(1.0f));                                                         \
  return V::mul(p, V::pow2i(n));

#if defined(__AVX2__)
// The lanes of an 8-float register folded by a shuffle tree (halves, then pairs, then one).
inline float hmax8(__m256 v) {
  __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_max_ss(x, _mm_movehdup_ps(x)));
}
inline float hsum8(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
}
#endif

#if defined(__AVX512F__)
struct V512 {
  using reg = __m512;
  static constexpr int kWidth = 16;
  static inline __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1); }
  static inline reg zero() { return _mm512_setzero_ps(); }
  static inline reg set1(float x) { return _mm512_set1_ps(x); }
  static inline reg load(const float* p) { return _mm512_loadu_ps(p); }
  static inline void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static inline reg load_n(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static inline void store_n(float* p, reg v, int n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static inline reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static inline reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
  static inline reg sub1(reg a) { return _mm512_sub_ps(_mm512_set1_ps(1.0f), a); }
  static inline reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static inline reg div(reg a, reg b) { return _mm512_div_ps(a, b); }
  // a / b for b >= 1 (the activations' denominators, +inf included: exp overflows to it):
  // vrcp14ps refined by one Newton step, within about 2 ulp of the quotient; b above 2^126 is
  // taken as 2^126 (a quotient under 2^-126 |a| instead of a smaller one; the min keeps NaN).
  // vdivps on 512 bits has one divider for the whole register on Intel cores (a throughput of
  // ~10 cycles): a GELU pass over 128 x 1536 values took 102.6 us with it, 69.9 with this
  // (bench/gemm_bench BM_ActivationPass, on a Xeon).
  static inline reg div_pos(reg a, reg b) {
    b = _mm512_min_ps(_mm512_set1_ps(0x1p126f), b);
    const __m512 r = _mm512_rcp14_ps(b);
    const __m512 e = _mm512_fnmadd_ps(b, r, _mm512_set1_ps(1.0f));
    return _mm512_mul_ps(a, _mm512_fmadd_ps(r, e, r));
  }
  static inline reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static inline reg max(reg a, reg b) { return _mm512_max_ps(a, b); }
  static inline reg min(reg a, reg b) { return _mm512_min_ps(a, b); }
  static inline reg abs(reg a) { return _mm512_abs_ps(a); }
  static inline reg copysign(reg mag, reg sgn) {
    const __m512i m = _mm512_set1_epi32(0x7fffffff);
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(m, _mm512_castps_si512(mag), _mm512_castps_si512(sgn), 0xca));
  }
  static inline reg lt_select(reg a, reg b, reg x, reg y) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), y, x);
  }
  static inline reg round(reg a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static inline reg pow2i(reg n) {
    __m512i i = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(i, 23));
  }
  static inline reg exp(reg x) { FUSOR_EXP_BODY(V512, x) }
  // (The zero-masked extract: GCC 12 warns of _mm512_castps512_ps256's undefined upper half.)
  static inline float hmax(reg v) {
    return hmax8(_mm256_max_ps(_mm512_maskz_extractf32x8_ps(0xFF, v, 0), _mm512_maskz_extractf32x8_ps(0xFF, v, 1)));
  }
  static inline float hsum(reg v) {
    return hsum8(_mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xFF, v, 0), _mm512_maskz_extractf32x8_ps(0xFF, v, 1)));
  }
};
#endif

#if defined(__AVX2__) && defined(__FMA__)
struct V256 {
  using reg = __m256;
  static constexpr int kWidth = 8;
  static inline __m256i mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static inline reg zero() { return _mm256_setzero_ps(); }
  static inline reg set1(float x) { return _mm256_set1_ps(x); }
  static inline reg load(const float* p) { return _mm256_loadu_ps(p); }
  static inline void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static inline reg load_n(const float* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static inline void store_n(float* p, reg v, int n) { _mm256_maskstore_ps(p, mask(n), v); }
  static inline reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static inline reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
  static inline reg sub1(reg a) { return _mm256_sub_ps(_mm256_set1_ps(1.0f), a); }
  static inline reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static inline reg div(reg a, reg b) { return _mm256_div_ps(a, b); }
  static inline reg div_pos(reg a, reg b) { return _mm256_div_ps(a, b); }  // (V512's)
  static inline reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static inline reg max(reg a, reg b) { return _mm256_max_ps(a, b); }
  static inline reg min(reg a, reg b) { return _mm256_min_ps(a, b); }
  static inline reg abs(reg a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static inline reg copysign(reg mag, reg sgn) {
    const reg s = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(s, mag), _mm256_and_ps(s, sgn));
  }
  static inline reg lt_select(reg a, reg b, reg x, reg y) { return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_LT_OQ)); }
  static inline reg round(reg a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static inline reg pow2i(reg n) {
    __m256i i = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(i, 23));
  }
  static inline reg exp(reg x) { FUSOR_EXP_BODY(V256, x) }
  static inline float hmax(reg v) { return hmax8(v); }
  static inline float hsum(reg v) { return hsum8(v); }
};
#endif

// One lane: the baseline path (the compiler may still use SSE2).
struct V1 {
  using reg = float;
  static constexpr int kWidth = 1;
  static inline reg zero() { return 0.0f; }
  static inline reg set1(float x) { return x; }
  static inline reg load(const float* p) { return *p; }
  static inline void store(float* p, reg v) { *p = v; }
  static inline reg load_n(const float* p, int n) { return n > 0 ? *p : 0.0f; }
  static inline void store_n(float* p, reg v, int n) { if (n > 0) *p = v; }
  static inline reg add(reg a, reg b) { return a + b; }
  static inline reg sub(reg a, reg b) { return a - b; }
  static inline reg sub1(reg a) { return 1.0f - a; }
  static inline reg mul(reg a, reg b) { return a * b; }
  static inline reg div(reg a, reg b) { return a / b; }
  static inline reg div_pos(reg a, reg b) { return a / b; }
  static inline reg fma(reg a, reg b, reg c) { return a * b + c; }
  static inline reg max(reg a, reg b) { return a > b ? a : b; }
  static inline reg min(reg a, reg b) { return a < b ? a : b; }
  static inline reg abs(reg a) { return std::fabs(a); }
  static inline reg copysign(reg mag, reg sgn) { return std::copysign(mag, sgn); }
  static inline reg lt_select(reg a, reg b, reg x, reg y) { return a < b ? x : y; }
  static inline reg exp(reg x) { return std::exp(x); }
  static inline float hmax(reg v) { return v; }
  static inline float hsum(reg v) { return v; }
};

#undef FUSOR_EXP_BODY

}  // namespace fusor::FUSOR_SIMD_NS
