// AVX2 (+FMA) loops of kernels/int8/qelementwise.h, for machines without AVX-512: 16 elements per
// step (two vectors of eight floats). Each element goes through the scalar definition's float
// operations in the same order (fused multiply-adds where it has std::fma), and every rounding is
// the current rounding mode's, as std::nearbyint's (cvtps2dq and vroundps with
// _MM_FROUND_CUR_DIRECTION; nearest even by default), so the results agree with the scalar loops
// bit for bit. AVX2 has no byte masks: a byte tail is copied into a 16-byte buffer, run as a full
// step and copied out; float tails load and store with vmaskmovps.
#include <immintrin.h>

#include <cstring>

#include "kernels/int8/qelementwise.h"

namespace fusor::int8 {
namespace {

// Lanes [0, left) set (left <= 8): masks for vmaskmovps.
inline __m256i lane_mask(int64_t left) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)), idx);
}

// Eight bytes at p widened to floats.
inline __m256 load8(const uint8_t* p, bool s) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(s ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b));
}

inline __m256 bcast(const uint8_t* p, bool s) {
  return _mm256_set1_ps(s ? static_cast<float>(static_cast<int8_t>(*p)) : static_cast<float>(*p));
}

// clamp(f, lo, hi) rounded, for two vectors: 16 bytes. The clamped values lie in [lo, hi], within
// [-128, 255], so the narrowing to 16 bits is exact and the one to 8 bits saturates nothing.
inline __m128i narrow16(__m256 f0, __m256 f1, __m256 lo, __m256 hi, bool s) {
  const __m256i i0 = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(f0, lo), hi));
  const __m256i i1 = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(f1, lo), hi));
  // packs interleaves the 128-bit halves (i0 lo, i1 lo, i0 hi, i1 hi); 0xD8 puts them in order.
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(i0, i1), 0xD8);
  const __m128i w0 = _mm256_castsi256_si128(w), w1 = _mm256_extracti128_si256(w, 1);
  return s ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
}

struct Binary {
  const QBinaryConsts& q;
  __m256 lo, hi, ka, kb, c, k, za, zb, zy;
  explicit Binary(const QBinaryConsts& qc)
      : q(qc), lo(_mm256_set1_ps(qc.lo)), hi(_mm256_set1_ps(qc.hi)), ka(_mm256_set1_ps(qc.ka)),
        kb(_mm256_set1_ps(qc.kb)), c(_mm256_set1_ps(qc.c)), k(_mm256_set1_ps(qc.k)), za(_mm256_set1_ps(qc.za)),
        zb(_mm256_set1_ps(qc.zb)), zy(_mm256_set1_ps(qc.zy)) {}

  __m256 f(__m256 av, __m256 bv) const {
    return q.mul ? _mm256_fmadd_ps(_mm256_mul_ps(_mm256_sub_ps(av, za), _mm256_sub_ps(bv, zb)), k, zy)
                 : _mm256_fmadd_ps(av, ka, _mm256_fmadd_ps(bv, kb, c));
  }
  // 16 elements from a and b (stride 0: the one value, else contiguous) into y.
  void step(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* y) const {
    const bool s = q.is_signed;
    const __m256 a0 = sa ? load8(a, s) : bcast(a, s), a1 = sa ? load8(a + 8, s) : a0;
    const __m256 b0 = sb ? load8(b, s) : bcast(b, s), b1 = sb ? load8(b + 8, s) : b0;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), narrow16(f(a0, b0), f(a1, b1), lo, hi, s));
  }
};

inline __m128i quantize16(__m256 v0, __m256 v1, __m256 s, __m256 z, __m256 lo, __m256 hi, bool sgn) {
  auto one = [&](__m256 v) {
    __m256 r = _mm256_round_ps(_mm256_div_ps(v, s), _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC);
    r = _mm256_and_ps(r, _mm256_cmp_ps(r, r, _CMP_ORD_Q));  // NaN -> 0, as the scalar loop
    return _mm256_add_ps(r, z);
  };
  return narrow16(one(v0), one(v1), lo, hi, sgn);
}

inline __m256 dequantize8(__m128i b, bool s, __m256i z, __m256 scale) {
  const __m256i v = _mm256_sub_epi32(s ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b), z);
  return _mm256_mul_ps(_mm256_cvtepi32_ps(v), scale);
}

}  // namespace

void qbinary_run_avx2(const QBinaryConsts& q, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* y,
                      int64_t n) {
  const Binary op(q);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) op.step(a + i * sa, sa, b + i * sb, sb, y + i);
  if (i < n) {
    const auto left = static_cast<size_t>(n - i);
    uint8_t ta[16] = {}, tb[16] = {}, ty[16];
    if (sa) std::memcpy(ta, a + i, left);
    if (sb) std::memcpy(tb, b + i, left);
    op.step(sa ? ta : a, sa, sb ? tb : b, sb, ty);
    std::memcpy(y + i, ty, left);
  }
}

void quantize_run_avx2(const float* x, float scale, int32_t zero_point, bool is_signed, uint8_t* y, int64_t n) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(static_cast<float>(zero_point));
  const __m256 lo = _mm256_set1_ps(is_signed ? -128.0f : 0.0f), hi = _mm256_set1_ps(is_signed ? 127.0f : 255.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i r = quantize16(_mm256_loadu_ps(x + i), _mm256_loadu_ps(x + i + 8), s, z, lo, hi, is_signed);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), r);
  }
  if (i < n) {
    const int64_t left = n - i;
    const __m256 v0 = _mm256_maskload_ps(x + i, lane_mask(left));
    const __m256 v1 = _mm256_maskload_ps(x + i + 8, lane_mask(left - 8));
    uint8_t t[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(t), quantize16(v0, v1, s, z, lo, hi, is_signed));
    std::memcpy(y + i, t, static_cast<size_t>(left));
  }
}

bool minmax_run_avx2(const float* x, int64_t n, float& lo, float& hi) {
  // _mm256_min_ps(v, acc) is v < acc ? v : acc, std::min(acc, v) of the scalar loop: a NaN v
  // leaves acc as it is. The tail's lanes past n load as 0 and are blended away.
  __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi), nan = _mm256_setzero_ps();
  int64_t i = 0;
  // Four independent chains per bound (one was bound by vminps' latency: 3 cycles per 8 floats),
  // joined into vlo and vhi after them (a NaN in vlo or vhi stays, as in the loop).
  if (n >= 32) {
    __m256 l1 = vlo, l2 = vlo, l3 = vlo, h1 = vhi, h2 = vhi, h3 = vhi;
    for (; i + 32 <= n; i += 32) {
      const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
      const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
      vlo = _mm256_min_ps(v0, vlo);
      l1 = _mm256_min_ps(v1, l1);
      l2 = _mm256_min_ps(v2, l2);
      l3 = _mm256_min_ps(v3, l3);
      vhi = _mm256_max_ps(v0, vhi);
      h1 = _mm256_max_ps(v1, h1);
      h2 = _mm256_max_ps(v2, h2);
      h3 = _mm256_max_ps(v3, h3);
      const __m256 u01 = _mm256_or_ps(_mm256_cmp_ps(v0, v0, _CMP_UNORD_Q), _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q));
      const __m256 u23 = _mm256_or_ps(_mm256_cmp_ps(v2, v2, _CMP_UNORD_Q), _mm256_cmp_ps(v3, v3, _CMP_UNORD_Q));
      nan = _mm256_or_ps(nan, _mm256_or_ps(u01, u23));
    }
    vlo = _mm256_min_ps(_mm256_min_ps(l1, _mm256_min_ps(l2, l3)), vlo);
    vhi = _mm256_max_ps(_mm256_max_ps(h1, _mm256_max_ps(h2, h3)), vhi);
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    vlo = _mm256_min_ps(v, vlo);
    vhi = _mm256_max_ps(v, vhi);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  if (i < n) {
    const __m256i m = lane_mask(n - i);
    const __m256 mf = _mm256_castsi256_ps(m), v = _mm256_maskload_ps(x + i, m);
    vlo = _mm256_blendv_ps(vlo, _mm256_min_ps(v, vlo), mf);
    vhi = _mm256_blendv_ps(vhi, _mm256_max_ps(v, vhi), mf);
    nan = _mm256_or_ps(nan, _mm256_and_ps(mf, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  }
  // Lanes combined as the scalar loop would take them in turn (acc first: a NaN acc stays). The
  // values equal the scalar loop's; only the sign of a zero result may differ when +0 and -0 both
  // occur (which one comes first depends on the lane split), as on the AVX-512 path.
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, vlo);
  _mm256_store_ps(h, vhi);
  float rl = l[0], rh = h[0];
  for (int j = 1; j < 8; ++j) {
    rl = l[j] < rl ? l[j] : rl;
    rh = rh < h[j] ? h[j] : rh;
  }
  lo = rl;
  hi = rh;
  return _mm256_movemask_ps(nan) != 0;
}

void dequantize_run_avx2(const uint8_t* x, bool is_signed, float scale, int32_t zero_point, float* y, int64_t n) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i z = _mm256_set1_epi32(zero_point);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    _mm256_storeu_ps(y + i, dequantize8(b, is_signed, z, s));
    _mm256_storeu_ps(y + i + 8, dequantize8(_mm_srli_si128(b, 8), is_signed, z, s));
  }
  if (i < n) {
    const int64_t left = n - i;
    uint8_t t[16] = {};
    std::memcpy(t, x + i, static_cast<size_t>(left));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t));
    _mm256_maskstore_ps(y + i, lane_mask(left), dequantize8(b, is_signed, z, s));
    _mm256_maskstore_ps(y + i + 8, lane_mask(left - 8), dequantize8(_mm_srli_si128(b, 8), is_signed, z, s));
  }
}

}  // namespace fusor::int8
