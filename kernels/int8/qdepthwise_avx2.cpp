// AVX2 depthwise int8 convolution (qdepthwise_avx2, contract in kernels/int8/qdepthwise.h): per
// output row, each tap's pointer is set once (kernel rows above or below the input read a row of
// X's zero point), then each block of 16 channels runs over the row's pixels, those whose taps
// are all inside horizontally in tiles of 4 (tap t of pixel ow at the tap's pointer plus
// ow * stride * C), the few border ones from a table of tap pointers (the zero-point row for taps
// left or right of the input). Per tap, the 16 input bytes of each pixel are widened to int16
// (one vpmovzxbw / vpmovsxbw from memory) and two vpmaddwd against the tap's even- and odd-lane
// weights add exactly x * w of one channel per 32-bit lane. The even and odd accumulators are
// interleaved back into channel order (two unpacks, two lane permutes) for QEpilogueAvx2, which
// requantizes as the scalar epilogue does (16 bytes in one store when it can).
//
// The last block of a channel count that is not a multiple of 16 never reads past a pixel: with
// C >= 16 it loads the 16 bytes ending at the pixel's last channel and moves the wanted ones down
// with vpshufb; with C < 16 it copies them into a zeroed buffer.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/int8/qdepthwise.h"
#include "kernels/int8/qepilogue_avx2.h"

namespace fusor::int8 {
namespace {

enum class Load { Full, Shift, Copy };

// What a block's loads need: the channel offset of its loads (c0; for Shift the pixel's last 16
// channels, C - 16), the channels it has (tail) and the vpshufb mask of the Shift form.
struct BlockLoad {
  int64_t coff = 0, tail = 16;
  __m128i shift = _mm_setzero_si128();
};

// The block's 16 channels of a pixel as int16; p: the pixel plus b.coff.
template <bool SIGNED, Load L>
inline __m256i load_x(const uint8_t* p, const BlockLoad& b) {
  __m128i v;
  if constexpr (L == Load::Full) {
    v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  } else if constexpr (L == Load::Shift) {
    v = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), b.shift);
  } else {
    alignas(16) uint8_t tmp[16] = {};
    std::memcpy(tmp, p, static_cast<size_t>(b.tail));
    v = _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
  }
  return SIGNED ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
}

// P pixels of one block: pixel p's tap t at tap[t] + off[p] (off includes b.coff), w the block's
// weights; pixel: the epilogue row of the first; y at the block's first channel. PACK: the
// epilogue's 16-byte form applies (1), its direct one (2), neither (0).
template <int P, bool SIGNED, Load L, int PACK>
inline void tile(const uint8_t* const* tap, const int64_t* off, int64_t taps, const int16_t* w, const BlockLoad& b,
                 const QEpilogueAvx2& e, int64_t pixel, void* y, int64_t C) {
  __m256i ev[P], od[P];
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) ev[p] = od[p] = _mm256_setzero_si256();
  for (int64_t t = 0; t < taps; ++t) {
    const __m256i we = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + t * 32));
    const __m256i wo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + t * 32 + 16));
    const uint8_t* px = tap[t];
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) {
      const __m256i x = load_x<SIGNED, L>(px + off[p], b);
      ev[p] = _mm256_add_epi32(ev[p], _mm256_madd_epi16(x, we));
      od[p] = _mm256_add_epi32(od[p], _mm256_madd_epi16(x, wo));
    }
  }
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
    // ev: channels 0 2 4 6 | 8 10 12 14, od: 1 3 5 7 | 9 11 13 15.
    const __m256i lo = _mm256_unpacklo_epi32(ev[p], od[p]), hi = _mm256_unpackhi_epi32(ev[p], od[p]);
    const __m256i c0 = _mm256_permute2x128_si256(lo, hi, 0x20), c8 = _mm256_permute2x128_si256(lo, hi, 0x31);
    if constexpr (PACK == 2) {
      e.store16_direct(c0, c8, pixel + p, y, C);
    } else if constexpr (PACK == 1) {
      e.store16(c0, c8, pixel + p, y, C);
    } else {
      e.store(c0, pixel + p, 0, y, C);
      e.store(c8, pixel + p, 1, y, C);
    }
  }
}

// One output row's geometry: pixels [lo, hi) have every tap inside horizontally and read tap t at
// inner[t] + (ow - lo) * step; the others read border[(ow < lo ? ow : ow - hi + lo) * taps + t].
struct RowTaps {
  int64_t lo = 0, hi = 0, step = 0;
  const uint8_t* const* inner = nullptr;
  const uint8_t* const* border = nullptr;
};

template <bool SIGNED, Load L, int PACK>
void block_row(const QDepthwiseArgs& a, const RowTaps& rt, int64_t taps, const int16_t* w, const BlockLoad& b,
               const QEpilogueAvx2& e, int64_t pixel0, void* y) {
  const int64_t OW = a.s->out_w, C = a.s->out_c;
  const int64_t here[1] = {b.coff};
  for (int64_t ow = 0; ow < rt.lo; ++ow)
    tile<1, SIGNED, L, PACK>(rt.border + ow * taps, here, taps, w, b, e, pixel0 + ow, y, C);
  int64_t ow = rt.lo;
  for (; ow + 4 <= rt.hi; ow += 4) {
    const int64_t d = (ow - rt.lo) * rt.step + b.coff;
    const int64_t off[4] = {d, d + rt.step, d + 2 * rt.step, d + 3 * rt.step};
    tile<4, SIGNED, L, PACK>(rt.inner, off, taps, w, b, e, pixel0 + ow, y, C);
  }
  for (; ow < rt.hi; ++ow) {
    const int64_t off[1] = {(ow - rt.lo) * rt.step + b.coff};
    tile<1, SIGNED, L, PACK>(rt.inner, off, taps, w, b, e, pixel0 + ow, y, C);
  }
  for (; ow < OW; ++ow)
    tile<1, SIGNED, L, PACK>(rt.border + (ow - rt.hi + rt.lo) * taps, here, taps, w, b, e, pixel0 + ow, y, C);
}

template <bool SIGNED, Load L>
void block(const QDepthwiseArgs& a, const RowTaps& rt, int64_t taps, const int16_t* w, const BlockLoad& b, int64_t c0,
           int64_t pixel0) {
  const QEpilogue ep = a.ep.offset(0, c0);
  QEpilogueAvx2 e(ep, a.s->out_c - c0);
  e.load_column(0);
  e.load_column(1);
  void* y = a.y + c0 * a.ep.out_bytes();
  if (e.direct16()) {
    block_row<SIGNED, L, 2>(a, rt, taps, w, b, e, pixel0, y);
  } else if (e.packs16()) {
    block_row<SIGNED, L, 1>(a, rt, taps, w, b, e, pixel0, y);
  } else {
    block_row<SIGNED, L, 0>(a, rt, taps, w, b, e, pixel0, y);
  }
}

template <bool SIGNED>
void rows(const QDepthwiseArgs& a, const QDepthwiseAvx2& q, int64_t row0, int64_t row1) {
  const Conv2dShape& s = *a.s;
  const int64_t C = s.out_c, taps = q.taps;
  // A row of X's zero point: the kernel rows above and below the input read it, and its first
  // pixel stands for every tap left or right of the input.
  std::vector<uint8_t> zero(static_cast<size_t>(s.in_w * C + 32), static_cast<uint8_t>(a.x_zero));
  // Pixels [lo, hi) have every tap inside horizontally.
  const int64_t reach = (s.k_w - 1) * s.dil_w;
  RowTaps rt;
  rt.step = s.stride_w * C;
  rt.lo = std::min((s.pad_l + s.stride_w - 1) / s.stride_w, s.out_w);
  rt.hi = s.in_w - 1 + s.pad_l - reach >= 0 ? (s.in_w - 1 + s.pad_l - reach) / s.stride_w + 1 : 0;
  rt.hi = std::clamp(rt.hi, rt.lo, s.out_w);
  std::vector<const uint8_t*> inner(static_cast<size_t>(taps));
  std::vector<const uint8_t*> border(static_cast<size_t>((s.out_w - rt.hi + rt.lo) * taps));
  rt.inner = inner.data();
  rt.border = border.data();
  std::vector<const uint8_t*> row_at(static_cast<size_t>(s.k_h));

  BlockLoad full_load, tail_load;
  const int64_t full_blocks = C / 16;
  tail_load.tail = C - full_blocks * 16;
  tail_load.coff = C >= 16 ? C - 16 : 0;
  alignas(16) int8_t mask[16];
  for (int i = 0; i < 16; ++i) mask[i] = i < tail_load.tail ? static_cast<int8_t>(i + 16 - tail_load.tail) : -1;
  tail_load.shift = _mm_load_si128(reinterpret_cast<const __m128i*>(mask));

  for (int64_t r = row0; r < row1; ++r) {
    const int64_t n = r / s.out_h, oh = r % s.out_h;
    for (int64_t kh = 0; kh < s.k_h; ++kh) {
      const int64_t ih = oh * s.stride_h - s.pad_t + kh * s.dil_h;
      row_at[static_cast<size_t>(kh)] = ih >= 0 && ih < s.in_h ? a.x + (n * s.in_h + ih) * s.in_w * C : zero.data();
    }
    for (int64_t kh = 0; kh < s.k_h; ++kh)
      for (int64_t kw = 0; kw < s.k_w; ++kw)
        if (rt.lo < rt.hi)
          inner[static_cast<size_t>(kh * s.k_w + kw)] =
              row_at[static_cast<size_t>(kh)] + (rt.lo * s.stride_w - s.pad_l + kw * s.dil_w) * C;
    for (int64_t i = 0, ow = 0; ow < s.out_w; ++ow) {
      if (ow == rt.lo) ow = rt.hi;
      if (ow >= s.out_w) break;
      for (int64_t kh = 0; kh < s.k_h; ++kh)
        for (int64_t kw = 0; kw < s.k_w; ++kw) {
          const int64_t iw = ow * s.stride_w - s.pad_l + kw * s.dil_w;
          border[static_cast<size_t>(i++)] = iw >= 0 && iw < s.in_w ? row_at[static_cast<size_t>(kh)] + iw * C : zero.data();
        }
    }
    const int64_t pixel0 = r * s.out_w;
    for (int64_t blk = 0; blk < full_blocks; ++blk) {
      full_load.coff = blk * 16;
      block<SIGNED, Load::Full>(a, rt, taps, q.w.data() + blk * taps * 32, full_load, blk * 16, pixel0);
    }
    if (full_blocks < q.blocks) {
      const int16_t* w = q.w.data() + full_blocks * taps * 32;
      if (C >= 16) {
        block<SIGNED, Load::Shift>(a, rt, taps, w, tail_load, full_blocks * 16, pixel0);
      } else {
        block<SIGNED, Load::Copy>(a, rt, taps, w, tail_load, 0, pixel0);
      }
    }
  }
}

}  // namespace

void qdepthwise_avx2(const QDepthwiseArgs& a, const QDepthwiseAvx2& q, int64_t row0, int64_t row1) {
  if (a.signed_act) {
    rows<true>(a, q, row0, row1);
  } else {
    rows<false>(a, q, row0, row1);
  }
}

}  // namespace fusor::int8
