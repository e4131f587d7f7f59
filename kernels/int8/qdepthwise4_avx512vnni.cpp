// AVX512-VNNI depthwise int8 convolution, four horizontal taps per vpdpbusd (qdepthwise.h says the
// tap rows and the channel order). Per output row: the kernel rows that fall outside the input
// are folded into the starting value (their taps read the zero point), the others read tap rows
// from the thread's ring, built when an input row is first needed. int8 inputs are moved to uint8
// by flipping the sign bit (the zero point with them; QDepthwise4::offset holds -128 * sum_t w).
//
// The epilogue packs 4 vectors of int32 into 64 bytes with saturating packs, which put the
// channels back in order; the clamp to [qmin, qmax] is then done on bytes, unless a rounded
// result might not fit int32 (QDepthwise4::clamp_in_float) or there is a residual.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_*() inside the conversion and min/max intrinsics as
// maybe-uninitialized (as kernels/gemm/simd.h says).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <type_traits>

#include "kernels/int8/qdepthwise.h"

#ifndef DW4_P
#define DW4_P 4
#endif
namespace fusor::int8 {
namespace {

struct Ctx {
  const QDepthwiseArgs* a;
  const QDepthwise4* q;
  int64_t block, c0;
  __mmask64 mask;  // the block's channels inside C
  __m512i xz;      // the pad byte (uint8 domain) in every byte
};

// Four tap vectors (64 channels each) into 4 vectors of 16 channels x 4 taps, stored at dst.
inline void interleave_store(__m512i t0, __m512i t1, __m512i t2, __m512i t3, uint8_t* dst) {
  const __m512i lo01 = _mm512_unpacklo_epi8(t0, t1), hi01 = _mm512_unpackhi_epi8(t0, t1);
  const __m512i lo23 = _mm512_unpacklo_epi8(t2, t3), hi23 = _mm512_unpackhi_epi8(t2, t3);
  _mm512_store_si512(dst, _mm512_unpacklo_epi16(lo01, lo23));
  _mm512_store_si512(dst + 64, _mm512_unpackhi_epi16(lo01, lo23));
  _mm512_store_si512(dst + 128, _mm512_unpacklo_epi16(hi01, hi23));
  _mm512_store_si512(dst + 192, _mm512_unpackhi_epi16(hi01, hi23));
}

template <bool SIGNED>
inline __m512i load_tap(const uint8_t* p, __mmask64 mask) {
  __m512i v = _mm512_maskz_loadu_epi8(mask, p);
  if constexpr (SIGNED) v = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
  return v;
}

// The tap row of input row xrow (its first pixel, at the block's first channel): per output
// column, per group of 4 taps, 256 bytes.
template <bool SIGNED>
void build_tap_row(const Ctx& c, const uint8_t* xrow, uint8_t* dst) {
  const Conv2dShape& s = *c.a->s;
  const int64_t C = s.in_c, G = c.q->groups, kw_n = s.k_w;
  // Columns [lo, hi) have every tap inside horizontally.
  const int64_t reach = (s.k_w - 1) * s.dil_w;
  int64_t lo = (s.pad_l + s.stride_w - 1) / s.stride_w;
  int64_t hi = s.in_w - 1 + s.pad_l - reach >= 0 ? (s.in_w - 1 + s.pad_l - reach) / s.stride_w + 1 : 0;
  lo = std::min(lo, s.out_w);
  hi = std::clamp(hi, lo, s.out_w);
  const __m512i zero = _mm512_setzero_si512();
  auto column = [&](int64_t ow, bool checked) {
    for (int64_t g = 0; g < G; ++g) {
      __m512i t[4];
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        const int64_t kw = 4 * g + i, iw = ow * s.stride_w - s.pad_l + kw * s.dil_w;
        if (kw >= kw_n) {
          t[i] = zero;
        } else if (checked && (iw < 0 || iw >= s.in_w)) {
          t[i] = c.xz;
        } else {
          t[i] = load_tap<SIGNED>(xrow + iw * C, c.mask);
        }
      }
      interleave_store(t[0], t[1], t[2], t[3], dst + (ow * G + g) * 256);
    }
  };
  for (int64_t ow = 0; ow < lo; ++ow) column(ow, true);
  if (G == 1 && kw_n == 3) {
    const int64_t step = s.stride_w * C, d = s.dil_w * C;
    const uint8_t* px = xrow + (lo * s.stride_w - s.pad_l) * C;
    for (int64_t ow = lo; ow < hi; ++ow, px += step)
      interleave_store(load_tap<SIGNED>(px, c.mask), load_tap<SIGNED>(px + d, c.mask),
                       load_tap<SIGNED>(px + 2 * d, c.mask), zero, dst + ow * 256);
  } else {
    for (int64_t ow = lo; ow < hi; ++ow) column(ow, false);
  }
  for (int64_t ow = hi; ow < s.out_w; ++ow) column(ow, true);
}

// The epilogue's constants for one block.
struct Consts {
  __m512 mul[4], add[4];
  __m512 lo, hi, clo, chi, rt, rz, rc;
  __m512i qmin, qmax, zsel[4];
};

// Finishes 4 accumulators (one pixel, 64 channels) and stores 64 bytes at y (z: its residual).
template <bool SIGNED, bool RES, bool FCLAMP>
inline void finish(const Ctx& c, const Consts& k, const __m512i* acc, uint8_t* y, const uint8_t* z) {
  __m512i zb = _mm512_setzero_si512();
  if constexpr (RES) zb = _mm512_maskz_loadu_epi8(c.mask, z);
  __m512i q[4];
#pragma GCC unroll 4
  for (int v = 0; v < 4; ++v) {
    __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[v]), k.mul[v], k.add[v]);
    if constexpr (RES) {
      const __m512 t = _mm512_roundscale_ps(_mm512_min_ps(_mm512_max_ps(f, k.clo), k.chi), _MM_FROUND_TO_NEAREST_INT);
      __m512i zi = _mm512_shuffle_epi8(zb, k.zsel[v]);
      if constexpr (SIGNED) zi = _mm512_srai_epi32(zi, 24);
      f = _mm512_fmadd_ps(t, k.rt, _mm512_fmadd_ps(_mm512_cvtepi32_ps(zi), k.rz, k.rc));
    }
    if constexpr (FCLAMP) f = _mm512_min_ps(_mm512_max_ps(f, k.lo), k.hi);
    q[v] = _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  const __m512i p01 = _mm512_packs_epi32(q[0], q[1]), p23 = _mm512_packs_epi32(q[2], q[3]);
  __m512i b;
  if constexpr (SIGNED) {
    b = _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(p01, p23), k.qmin), k.qmax);
  } else {
    b = _mm512_min_epu8(_mm512_max_epu8(_mm512_packus_epi16(p01, p23), k.qmin), k.qmax);
  }
  _mm512_mask_storeu_epi8(y, c.mask, b);
}

// One output row: nk kernel rows inside the input, their tap rows and weights (group 0). NK > 0:
// nk == NK and one group of taps (a 3x3 kernel away from the top and bottom), loops unrolled.
template <int NK, int P, bool SIGNED, bool RES, bool FCLAMP>
void out_row(const Ctx& c, const Consts& k, const uint8_t* const* rows, const int8_t* const* wrows, int nk,
             const __m512i* start, uint8_t* y, const uint8_t* z) {
  const Conv2dShape& s = *c.a->s;
  const int64_t C = s.out_c, G = NK > 0 ? 1 : c.q->groups, wg = c.q->blocks * 256;
  const int n_rows = NK > 0 ? NK : nk;
  int64_t ow = 0;
  auto tile = [&](auto pc) {
    constexpr int PP = decltype(pc)::value;
    __m512i acc[PP][4];
#pragma GCC unroll 8
    for (int p = 0; p < PP; ++p)
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[p][v] = start[v];
#pragma GCC unroll 4
    for (int i = 0; i < n_rows; ++i) {
      for (int64_t g = 0; g < G; ++g) {
        const int8_t* wp = wrows[i] + g * wg;
        const uint8_t* rp = rows[i] + (ow * G + g) * 256;
        __m512i w[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) w[v] = _mm512_loadu_si512(wp + 64 * v);
#pragma GCC unroll 8
        for (int p = 0; p < PP; ++p)
#pragma GCC unroll 4
          for (int v = 0; v < 4; ++v)
            acc[p][v] = _mm512_dpbusd_epi32(acc[p][v], _mm512_load_si512(rp + p * G * 256 + 64 * v), w[v]);
      }
    }
#pragma GCC unroll 8
    for (int p = 0; p < PP; ++p)
      finish<SIGNED, RES, FCLAMP>(c, k, acc[p], y + (ow + p) * C, RES ? z + (ow + p) * C : nullptr);
  };
  for (; ow + P <= s.out_w; ow += P) tile(std::integral_constant<int, P>());
  for (; ow < s.out_w; ++ow) tile(std::integral_constant<int, 1>());
}

template <bool SIGNED, bool RES, bool FCLAMP>
void rows_of_block(const Ctx& c, const Consts& k, int64_t row0, int64_t row1, uint8_t* ring) {
  const QDepthwiseArgs& a = *c.a;
  const QDepthwise4& q = *c.q;
  const Conv2dShape& s = *a.s;
  const int64_t C = s.out_c, G = q.groups, ring_n = q.ring_rows(s.dil_h);
  const size_t row_bytes = q.tap_row_bytes(s.out_w);
  int64_t tags[64];
  std::fill(tags, tags + 64, -1);
  const __m512i* off = reinterpret_cast<const __m512i*>(q.offset.data() + c.block * 64);
  for (int64_t r = row0; r < row1; ++r) {
    const int64_t n = r / s.out_h, oh = r % s.out_h;
    const uint8_t* rows[64];
    const int8_t* wrows[64];
    int nk = 0;
    __m512i start[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) start[v] = _mm512_loadu_si512(off + v);
    for (int64_t kh = 0; kh < s.k_h; ++kh) {
      const int64_t ih = oh * s.stride_h - s.pad_t + kh * s.dil_h;
      const int8_t* wk = q.w.data() + ((kh * G) * q.blocks + c.block) * 256;
      if (ih < 0 || ih >= s.in_h) {
        for (int64_t g = 0; g < G; ++g)
#pragma GCC unroll 4
          for (int v = 0; v < 4; ++v)
            start[v] = _mm512_dpbusd_epi32(start[v], c.xz, _mm512_loadu_si512(wk + g * q.blocks * 256 + 64 * v));
        continue;
      }
      const int64_t key = n * s.in_h + ih, slot = ih % ring_n;
      uint8_t* tr = ring + static_cast<size_t>(slot) * row_bytes;
      if (tags[slot] != key) {
        build_tap_row<SIGNED>(c, a.x + key * s.in_w * C + c.c0, tr);
        tags[slot] = key;
      }
      rows[nk] = tr;
      wrows[nk] = wk;
      ++nk;
    }
    const int64_t pix = r * s.out_w * C + c.c0;
    const uint8_t* zr = RES ? a.ep.residual + pix : nullptr;
    if (G == 1 && nk == 3) {
      out_row<3, DW4_P, SIGNED, RES, FCLAMP>(c, k, rows, wrows, nk, start, a.y + pix, zr);
    } else {
      out_row<0, DW4_P, SIGNED, RES, FCLAMP>(c, k, rows, wrows, nk, start, a.y + pix, zr);
    }
  }
}

}  // namespace

void qdepthwise4_avx512(const QDepthwiseArgs& a, const QDepthwise4& q, int64_t block, int64_t row0, int64_t row1,
                        uint8_t* ring) {
  const Conv2dShape& s = *a.s;
  const int64_t c0 = block * 64, left = std::min<int64_t>(64, s.out_c - c0);
  Ctx c{&a, &q, block, c0, left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1,
        _mm512_set1_epi8(static_cast<char>(a.x_zero + (a.signed_act ? 128 : 0)))};
  const QEpilogue& e = a.ep;
  Consts k;
  for (int v = 0; v < 4; ++v) {
    k.mul[v] = _mm512_loadu_ps(q.mult.data() + block * 64 + 16 * v);
    k.add[v] = _mm512_loadu_ps(q.add.data() + block * 64 + 16 * v);
    // Residual byte of lane i of vector v: byte 4v + i % 4 of its 128-bit part, zero-extended
    // (uint8) or at the top for the sign-extending shift (int8).
    int32_t sel[16];
    for (int i = 0; i < 16; ++i) {
      const int32_t b = 4 * v + i % 4;
      sel[i] = a.signed_act ? static_cast<int32_t>(static_cast<uint32_t>(b) << 24 | 0x808080u)
                            : static_cast<int32_t>(0x80808000u | static_cast<uint32_t>(b));
    }
    k.zsel[v] = _mm512_loadu_si512(sel);
  }
  k.lo = _mm512_set1_ps(static_cast<float>(e.qmin));
  k.hi = _mm512_set1_ps(static_cast<float>(e.qmax));
  k.clo = _mm512_set1_ps(static_cast<float>(e.cmin));
  k.chi = _mm512_set1_ps(static_cast<float>(e.cmax));
  k.rt = _mm512_set1_ps(e.res_t);
  k.rz = _mm512_set1_ps(e.res_z);
  k.rc = _mm512_set1_ps(e.res_c);
  k.qmin = _mm512_set1_epi8(static_cast<char>(e.qmin));
  k.qmax = _mm512_set1_epi8(static_cast<char>(e.qmax));
  const bool res = e.residual != nullptr, fclamp = q.clamp_in_float || res;
  if (a.signed_act) {
    if (res) return rows_of_block<true, true, true>(c, k, row0, row1, ring);
    if (fclamp) return rows_of_block<true, false, true>(c, k, row0, row1, ring);
    return rows_of_block<true, false, false>(c, k, row0, row1, ring);
  }
  if (res) return rows_of_block<false, true, true>(c, k, row0, row1, ring);
  if (fclamp) return rows_of_block<false, false, true>(c, k, row0, row1, ring);
  rows_of_block<false, false, false>(c, k, row0, row1, ring);
}

}  // namespace fusor::int8
