// AVX2 panel kernel for narrow weights: vpmaddubsw (uint8 A x int8 B, pairs of k summed to int16),
// vpmaddwd by ones (int16 pairs to int32) and vpaddd; three instructions per 32 products, two of
// them multiplies, against four for the widened kernel (kernels/int8/qgemm_avx2.cpp). Exact only
// when no pair of products can leave int16: QPackedB chooses this form at packing when every
// pair of k of every column has positive weights summing to at most 128 and negative ones to at
// least -128 (255 * 128 = 32640 <= 32767), which holds for weights in [-64, 64] (ONNX Runtime's
// reduce_range quantization) and fails for most full-range 8-bit weights.
//
// B has the byte layout of the VNNI kernels ([k / 4][16 columns][k % 4]); A is read as it is,
// four bytes of a row per broadcast. Tiles of 5 rows x 16 columns: with six, the twelve
// accumulators, the two B vectors, the broadcast, the ones and a product need 17 YMM registers
// and GCC kept an accumulator on the stack (the kernel is bound by its multiplies, two per 32
// products, at any row count).
//
// Saturation is a property of a pair of k (2i, 2i + 1), not of a byte: vpmaddubsw adds the two
// products of a pair in int16. With weights in [-128, 127], a pair of A's bytes with
// a + a' <= 255 cannot saturate (255 * 128 = 32640), whatever each byte is. The forms below change
// and list bytes only in the pairs that could:
//
// The split form (qsplit_rows_avx2, qpanel_avx2_split) serves full-range weights: in each pair
// with a + a' > 255, the bytes >= 128 enter with their top bit cleared (the pair then sums to at
// most 254) and add 128 * b(k, :) after the tile. Worth it where such pairs are rare: activations
// after Relu or Clip with a zero point near 0; qgemm.cpp falls back to the widened kernel for a
// block of rows with more.
//
// The centred form (qcentre_rows_avx2, qpanel_avx2_centred) serves activations with a zero point
// near 128 (MobileNet v2's linear bottlenecks, LayerNorm outputs): the operands swap roles,
// d = a - 128 (a ^ 0x80) as the signed one and u = b + 128 (b ^ 0x80, flipped as the panel is
// loaded, in [0, 255]) as the unsigned one. A pair whose d have opposite signs cannot saturate
// (at most 128 * 255 = 32640 either way), nor one with |d| + |d'| <= 128; in the others, the
// bytes with |d| > 64 enter as d -+ 64 (the pair then sums to at most 128) and are listed, their
// +-64 * u(k, :) added from the panel. Then
//     sum_k a b = sum_k d u - 128 sum_k d + 128 sum_k b,
// the row term (with the listed bytes' +-64 * 128) computed with the rows and where the tiles'
// accumulators start, the column term from QPackedB::col_sums in the epilogue's column offsets.
// Rows in which no pair sums past 255 need neither: the plain byte kernel reads them in place
// (qrows_pairs_fit_avx2; kernels/int8/qgemm.cpp chooses the form of a block of rows).
//
// (Tried and dropped: a "signed" form for any bytes, |d| against b with d's sign by vpsignb,
// 2 * 128 * 127 fitting int16: the extra operation per product vector made it no faster than
// the widened kernel on this Zen 3, 0.92-1.10 of its time on qconv_bench's layers.)
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/int8/qepilogue_avx2.h"
#include "kernels/int8/qgemm_kernels.h"

namespace fusor::int8 {

namespace {

// MR rows of a tile of the panel's first 8 * NV columns into out[r][0, NV) (NV = 1: a last panel of
// at most 8 columns, out[r][1] zeroed). Centred: a holds d = a - 128 (signed), the panel's bytes are
// flipped to u = b + 128 (unsigned), and the accumulators start at init[r] (the rows' constant
// terms: no adds per tile).
template <int MR, int NV, bool Centred>
[[gnu::always_inline]] inline void byte_rows(const uint8_t* a, int64_t lda, const int8_t* panel, int64_t kq,
                                            const int32_t* init, __m256i (*out)[2]) {
  // Local accumulators, copied out at the end: accumulating into out directly made GCC store them
  // to the caller's array on every step.
  __m256i acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = Centred ? _mm256_set1_epi32(init[r]) : _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
#pragma GCC unroll 1
  for (int64_t q = 0; q < kq; ++q) {
    __m256i b[NV];
    for (int v = 0; v < NV; ++v) {
      b[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + q * 64 + 32 * v));
      if constexpr (Centred) b[v] = _mm256_xor_si256(b[v], flip);
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      int32_t x32;
      std::memcpy(&x32, a + r * lda + 4 * q, 4);
      const __m256i x = _mm256_set1_epi32(x32);
      for (int v = 0; v < NV; ++v) {
        const __m256i p = Centred ? _mm256_maddubs_epi16(b[v], x) : _mm256_maddubs_epi16(x, b[v]);
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(p, ones));
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    out[r][0] = acc[r][0];
    out[r][1] = NV == 2 ? acc[r][NV - 1] : _mm256_setzero_si256();  // NV 1: for fix, then not stored
  }
}

// The tiles of rows [i, i + mr) (mr <= 5) into acc through byte_rows: rows [0, mr) of acc written.
template <bool Centred>
[[gnu::always_inline]] inline void byte_tiles(const uint8_t* ai, int64_t lda, int64_t mr, const int8_t* panel,
                                              int64_t kq, const int32_t* init, __m256i (*acc)[2]) {
  if (mr == 5) {
    byte_rows<5, 2, Centred>(ai, lda, panel, kq, init, acc);
  } else if (mr == 4) {
    byte_rows<4, 2, Centred>(ai, lda, panel, kq, init, acc);
  } else if (mr >= 2) {
    byte_rows<2, 2, Centred>(ai, lda, panel, kq, init, acc);
    if (mr == 3) byte_rows<1, 2, Centred>(ai + 2 * lda, lda, panel, kq, Centred ? init + 2 : init, acc + 2);
  } else {
    byte_rows<1, 2, Centred>(ai, lda, panel, kq, init, acc);
  }
}

// Rows [0, mr) of acc are written by byte_tiles and only they are read (no initializer: it cost a
// rep stos per tile; GCC cannot see that the others stay unread).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// The panel over rows [0, m) of a (bytes, lda apart): per 5-row tile byte_tiles, then fix(i, mr,
// acc) (the split form's high bits, or nothing), then the epilogue.
template <bool Centred, class Fix>
[[gnu::always_inline]] inline void byte_panel(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel,
                                              int64_t kq, int64_t n, void* c, int64_t ldc, const QEpilogue& ep,
                                              const int32_t* init, Fix fix) {
  constexpr int MR = 5;
  QEpilogueAvx2 e(ep, n);  // once per panel: its column constants and clamps
  e.load_column(0);
  e.load_column(1);
  for (int64_t i = 0; i < m; i += MR) {
    const int64_t mr = std::min<int64_t>(MR, m - i);
    __m256i acc[MR][2];
    byte_tiles<Centred>(a + i * lda, lda, mr, panel, kq, Centred ? init + i : init, acc);
    fix(i, mr, acc);
    qstore_tile_avx2<MR>(e, i, mr, acc, c, ldc);
  }
}

// byte_panel for n <= 8 columns: half tiles of 8 rows (acc[r][1] zero; fix may add to it, the
// store reads only acc[r][0]).
template <bool Centred, class Fix>
[[gnu::noinline]] void byte_panel_half(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel,
                                                   int64_t kq, int64_t n, void* c, int64_t ldc, const QEpilogue& ep,
                                                   const int32_t* init, Fix fix) {
  // Tiles of 8 rows: with 10, GCC kept an accumulator on the stack.
  auto rows = [&]<int R>(int64_t i, __m256i(*acc)[2]) {
    byte_rows<R, 1, Centred>(a + i * lda, lda, panel, kq, Centred ? init + i : init, acc);
  };
  qhalf_tiles_avx2<8, 4>(ep, m, n, c, ldc, rows, fix);
}

// The full or the half form by the panel's width (the half one not inlined: beside it, GCC kept
// one of the full tile's accumulators on the stack).
template <bool Centred, class Fix>
[[gnu::always_inline]] inline void byte_panel_any(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel,
                                                  int64_t kq, int64_t n, void* c, int64_t ldc, const QEpilogue& ep,
                                                  const int32_t* init, Fix fix) {
  if (n <= 8) byte_panel_half<Centred>(a, lda, m, panel, kq, n, c, ldc, ep, init, fix);
  else byte_panel<Centred>(a, lda, m, panel, kq, n, c, ldc, ep, init, fix);
}

// The listed bytes of rows [i, i + mr) of a tile: +-(b(k, :) << Shift) each (the split form's
// 128 b, the centred form's +-64 b; Signed: 0x8000 in hot_k marks a minus), b from the byte panel
// the tile has just streamed (in cache: reading the int16 panel instead missed it, and FF2 of a
// dynamically quantized bert_like took 1.07-1.17 times the widened kernel's time). Column j's four
// k of a group are the bytes of its 32-bit lane: k's is shifted to the top, back down with its
// sign. (Rows not unrolled: unrolled here, GCC kept one accumulator of the tile loop on the stack.)
template <int Shift, bool Signed>
[[gnu::always_inline]] inline void add_listed(const int8_t* bytes, const int32_t* hot_start, const uint16_t* hot_k,
                                              int64_t i, int64_t mr, __m256i (*acc)[2]) {
  if (hot_start[i] == hot_start[i + mr]) return;
  for (int64_t r = 0; r < mr; ++r) {
    for (int32_t h = hot_start[i + r]; h < hot_start[i + r + 1]; ++h) {
      const int64_t k = hot_k[h] & 0x7fff;
      const int8_t* p = bytes + (k / 4) * 64;
      const __m128i up = _mm_cvtsi32_si128(static_cast<int>(24 - 8 * (k % 4))), down = _mm_cvtsi32_si128(24);
      const __m256i v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
      const __m256i v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32));
      const __m256i t0 = _mm256_slli_epi32(_mm256_sra_epi32(_mm256_sll_epi32(v0, up), down), Shift);
      const __m256i t1 = _mm256_slli_epi32(_mm256_sra_epi32(_mm256_sll_epi32(v1, up), down), Shift);
      if (Signed && (hot_k[h] & 0x8000)) {
        acc[r][0] = _mm256_sub_epi32(acc[r][0], t0);
        acc[r][1] = _mm256_sub_epi32(acc[r][1], t1);
      } else {
        acc[r][0] = _mm256_add_epi32(acc[r][0], t0);
        acc[r][1] = _mm256_add_epi32(acc[r][1], t1);
      }
    }
  }
}

// The plain panel on its own (inlined beside the half form's call, GCC kept one accumulator of its
// tile on the stack).
[[gnu::noinline]] void full_plain(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq,
                                  int64_t n, void* c, int64_t ldc, const QEpilogue& ep) {
  byte_panel<false>(a, lda, m, panel, kq, n, c, ldc, ep, nullptr, [](int64_t, int64_t, __m256i (*)[2]) {});
}

// The grouped form of the plain kernel: rows whose bytes are small enough that the int16 sums of
// four k groups cannot leave int16 (qrows_groups_fit_avx2) add four vpmaddubsw results with
// vpaddw before one vpmaddwd by ones: per 128 products 5 multiplies instead of 8. MR rows of a
// tile of 8 * NV columns, both int16 partial sums and int32 accumulators in registers (2 x 16:
// 8 of them; 5 x 8 for a half panel: with 3 x 16 and 6 x 8, GCC kept one on the stack); the k
// groups past the last whole four one by one.
template <int MR, int NV>
[[gnu::always_inline]] inline void group_rows(const uint8_t* a, int64_t lda, const int8_t* panel, int64_t kq,
                                             __m256i (*out)[2]) {
  __m256i acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  auto bcast = [&](int r, int64_t q) {
    int32_t x32;
    std::memcpy(&x32, a + r * lda + 4 * q, 4);
    return _mm256_set1_epi32(x32);
  };
  const int64_t kq4 = kq / 4 * 4;
#pragma GCC unroll 1
  for (int64_t q0 = 0; q0 < kq4; q0 += 4) {
    // Row by row, the panel's vectors read as memory operands (all of a step's products live at
    // once, GCC kept them on the stack).
    const int8_t* pq = panel + q0 * 64;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      __m256i part[NV];
      for (int v = 0; v < NV; ++v) {
        auto b = [&](int64_t dq) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(pq + dq * 64 + 32 * v)); };
        part[v] = _mm256_maddubs_epi16(bcast(r, q0), b(0));
#pragma GCC unroll 4
        for (int dq = 1; dq < 4; ++dq) part[v] = _mm256_add_epi16(part[v], _mm256_maddubs_epi16(bcast(r, q0 + dq), b(dq)));
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(part[v], ones));
      }
    }
  }
#pragma GCC unroll 1
  for (int64_t q = kq4; q < kq; ++q) {
    __m256i b[NV];
    for (int v = 0; v < NV; ++v) b[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + q * 64 + 32 * v));
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256i x = bcast(r, q);
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b[v]), ones));
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    out[r][0] = acc[r][0];
    out[r][1] = NV == 2 ? acc[r][NV - 1] : _mm256_setzero_si256();
  }
}

// One row of a full panel's tile (grouped_full's last row of an odd count; inlined there, GCC kept
// the 2-row tile's accumulators on the stack).
[[gnu::noinline]] void grouped_row(const uint8_t* a, int64_t lda, const int8_t* panel, int64_t kq, __m256i (*acc)[2]) {
  group_rows<1, 2>(a, lda, panel, kq, acc);
}

[[gnu::noinline]] void grouped_full(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq,
                                    int64_t n, void* c, int64_t ldc, const QEpilogue& ep) {
  constexpr int MR = 2;
  QEpilogueAvx2 e(ep, n);
  e.load_column(0);
  e.load_column(1);
  for (int64_t i = 0; i < m; i += MR) {
    const int64_t mr = std::min<int64_t>(MR, m - i);
    const uint8_t* ai = a + i * lda;
    __m256i acc[MR][2];
    if (mr == MR) group_rows<MR, 2>(ai, lda, panel, kq, acc);
    else grouped_row(ai, lda, panel, kq, acc);
    qstore_tile_avx2<MR>(e, i, mr, acc, c, ldc);
  }
}

[[gnu::noinline]] void grouped_half(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq,
                                    int64_t n, void* c, int64_t ldc, const QEpilogue& ep) {
  auto rows = [&]<int R>(int64_t i, __m256i(*acc)[2]) { group_rows<R, 1>(a + i * lda, lda, panel, kq, acc); };
  qhalf_tiles_avx2<5, 2>(ep, m, n, c, ldc, rows, [](int64_t, int64_t, __m256i(*)[2]) {});
}

#pragma GCC diagnostic pop

}  // namespace

void qpanel_avx2_bytes(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                       int64_t ldc, const QEpilogue& ep) {
  auto none = [](int64_t, int64_t, __m256i (*)[2]) {};
  if (n <= 8) return byte_panel_half<false>(a, lda, m, panel, kq, n, c, ldc, ep, nullptr, none);
  full_plain(a, lda, m, panel, kq, n, c, ldc, ep);
}

void qpanel_avx2_grouped(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n,
                         void* c, int64_t ldc, const QEpilogue& ep) {
  if (n <= 8) return grouped_half(a, lda, m, panel, kq, n, c, ldc, ep);
  grouped_full(a, lda, m, panel, kq, n, c, ldc, ep);
}

namespace {

// The first `bytes` (a multiple of 4, under 32) bytes at p, zeros after them; nothing past them read.
inline __m256i load_dwords(const uint8_t* p, int64_t bytes) {
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(bytes / 4)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), mask);
}

// The split (Centred false) or centred form of rows [0, m) of kp bytes, in streams of 32-byte
// chunks: contiguous rows (lda == ldl == kp) as one stream, so that rows of a few dozen bytes (the
// 1x1 convs of MobileNet's early blocks: 16-32 input channels) cost no more per byte than long
// ones; other rows one stream each. The bytes past K enter as they are: B's rows there are zero,
// so whatever their value, their terms cancel. The centred form's row sums (vpsadbw) then row by
// row.
template <bool Centred>
bool prepare_rows(const uint8_t* a, int64_t lda, int64_t m, int64_t kp, uint8_t* lo, int64_t ldl,
                  int32_t* hot_start, uint16_t* hot_k, int64_t max_hot, int32_t* row_const) {
  const bool one = lda == kp && ldl == kp;
  const int64_t streams = one ? 1 : m, len = one ? m * kp : kp;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80)), c64 = _mm256_set1_epi8(64);
  const __m256i ones8 = _mm256_set1_epi8(1), c128 = _mm256_set1_epi16(128), c255 = _mm256_set1_epi16(255);
  const __m256i zero = _mm256_setzero_si256();
  int64_t n = 0, next_row = 1;
  hot_start[0] = 0;
  for (int64_t s = 0; s < streams; ++s) {
    const uint8_t* src = a + s * lda;
    uint8_t* dst = lo + s * ldl;
    for (int64_t g = 0; g < len; g += 32) {
      const int64_t bytes = std::min<int64_t>(32, len - g);  // a multiple of 4
      const __m256i v = bytes == 32 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + g))
                                    : load_dwords(src + g, bytes);
      // vpmaddubsw sums the products of a pair of k (2i, 2i + 1) in int16: only pairs whose two
      // bytes could reach 32767 together are changed and listed (the file's header).
      __m256i out, hot, pos = zero;
      if constexpr (Centred) {
        // d = a - 128; in a pair of one sign with |d| + |d'| > 128, each |d| > 64 moved by -+64.
        const __m256i d = _mm256_xor_si256(v, flip);
        const __m256i far = _mm256_cmpgt_epi8(_mm256_add_epi8(v, c64), zero);  // |d| > 64
        const __m256i big = _mm256_cmpgt_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(d), ones8), c128);
        const __m256i differ = _mm256_srai_epi16(_mm256_xor_si256(_mm256_slli_epi16(d, 8), d), 15);
        hot = _mm256_and_si256(far, _mm256_andnot_si256(differ, big));
        pos = _mm256_cmpgt_epi8(d, zero);
        out = _mm256_sub_epi8(d, _mm256_and_si256(hot, _mm256_blendv_epi8(_mm256_set1_epi8(-64), c64, pos)));
      } else {  // in a pair with a + a' > 255, the bytes >= 128 with their top bit cleared
        const __m256i over = _mm256_cmpgt_epi16(_mm256_maddubs_epi16(v, ones8), c255);
        hot = _mm256_and_si256(_mm256_and_si256(over, v), flip);
        out = _mm256_xor_si256(v, hot);
      }
      if (bytes == 32) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + g), out);
      } else {
        alignas(32) uint8_t tmp[32];
        _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), out);
        std::memcpy(dst + g, tmp, static_cast<size_t>(bytes));
      }
      uint32_t h = static_cast<uint32_t>(_mm256_movemask_epi8(hot));
      if (bytes < 32) h &= (uint32_t{1} << bytes) - 1;
      if (!h) continue;
      if (n + __builtin_popcount(h) > max_hot) return false;
      const uint32_t up = static_cast<uint32_t>(_mm256_movemask_epi8(pos));
      for (; h; h &= h - 1) {
        const int j = __builtin_ctz(h);
        const int64_t at = g + j, r = s + at / kp;
        while (next_row <= r) hot_start[next_row++] = static_cast<int32_t>(n);
        hot_k[n++] = static_cast<uint16_t>(at % kp | (Centred && !((up >> j) & 1) ? 0x8000 : 0));
      }
    }
  }
  while (next_row <= m) hot_start[next_row++] = static_cast<int32_t>(n);
  if constexpr (Centred) {
    // sum_k a b = [sum_k d_lo u + sum_listed (+-64) b] + 64 * 128 per listed byte (+ or - as it
    // moved) - 128 sum_k d + 128 colsum, sum_k d = sum_k a - 128 kp from the rows again (in L1).
    for (int64_t r = 0; r < m; ++r) {
      const uint8_t* ar = a + r * lda;
      __m256i acc = zero;
      int64_t k = 0;
      for (; k + 32 <= kp; k += 32)
        acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + k)), zero));
      if (k < kp) acc = _mm256_add_epi64(acc, _mm256_sad_epu8(load_dwords(ar + k, kp - k), zero));
      const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
      const int64_t sum = _mm_cvtsi128_si64(s2) + _mm_extract_epi64(s2, 1) - 128 * kp;
      int32_t signed_hot = 0;
      for (int32_t h = hot_start[r]; h < hot_start[r + 1]; ++h) signed_hot += hot_k[h] & 0x8000 ? -1 : 1;
      row_const[r] = static_cast<int32_t>(8192 * signed_hot - 128 * sum);
    }
  }
  return true;
}

}  // namespace

bool qsplit_rows_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp, uint8_t* lo, int64_t ldl,
                      int32_t* hot_start, uint16_t* hot_k, int64_t max_hot) {
  if (kp > 65536) return false;
  return prepare_rows<false>(a, lda, m, kp, lo, ldl, hot_start, hot_k, max_hot, nullptr);
}

void qpanel_avx2_split(const uint8_t* lo, int64_t lda, int64_t m, const int8_t* bytes, int64_t kq, int64_t n,
                       const int32_t* hot_start, const uint16_t* hot_k, void* c, int64_t ldc, const QEpilogue& ep) {
  // The high bits: + 128 * b(k, :) for each listed byte.
  auto high_bits = [&](int64_t i, int64_t mr, __m256i (*acc)[2]) { add_listed<7, false>(bytes, hot_start, hot_k, i, mr, acc); };
  byte_panel_any<false>(lo, lda, m, bytes, kq, n, c, ldc, ep, nullptr, high_bits);
}

bool qrows_pairs_fit_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp) {
  if (lda == kp) {  // contiguous rows: one stream
    kp *= m;
    m = 1;
  }
  const __m256i ones8 = _mm256_set1_epi8(1), c255 = _mm256_set1_epi16(255);
  // a(2i) + a(2i + 1) per 16-bit lane; `most` keeps the largest of a row so far.
  auto pairs = [&](__m256i v) { return _mm256_maddubs_epi16(v, ones8); };
  for (int64_t r = 0; r < m; ++r) {
    const uint8_t* ar = a + r * lda;
    int64_t k = 0;
    __m256i most = _mm256_setzero_si256();
    for (; k + 128 <= kp; k += 128) {
      const __m256i* p = reinterpret_cast<const __m256i*>(ar + k);
      const __m256i m01 = _mm256_max_epi16(pairs(_mm256_loadu_si256(p)), pairs(_mm256_loadu_si256(p + 1)));
      const __m256i m23 = _mm256_max_epi16(pairs(_mm256_loadu_si256(p + 2)), pairs(_mm256_loadu_si256(p + 3)));
      most = _mm256_max_epi16(most, _mm256_max_epi16(m01, m23));
      if (_mm256_movemask_epi8(_mm256_cmpgt_epi16(most, c255))) return false;
    }
    for (; k + 32 <= kp; k += 32)
      most = _mm256_max_epi16(most, pairs(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + k))));
    if (k < kp) most = _mm256_max_epi16(most, pairs(load_dwords(ar + k, kp - k)));  // whole dwords, masked
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi16(most, c255))) return false;
  }
  return true;
}

bool qrows_groups_fit_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp) {
  // Per 16 bytes (four k groups) of a row, the pair sums p0..p7: the grouped kernel's int16 lanes
  // add p0 + p2 + p4 + p6 and p1 + p3 + p5 + p7; each must stay <= 255 (255 * 128 = 32640).
  const __m256i ones8 = _mm256_set1_epi8(1), c255 = _mm256_set1_epi16(255);
  const __m256i lanes01 = _mm256_setr_epi16(-1, -1, 0, 0, 0, 0, 0, 0, -1, -1, 0, 0, 0, 0, 0, 0);
  const int64_t whole = kp / 16 * 16;
  for (int64_t r = 0; r < m; ++r) {
    const uint8_t* ar = a + r * lda;
    __m256i most = _mm256_setzero_si256();
    int64_t k = 0;
    auto add = [&](__m256i v) {
      const __m256i p = _mm256_maddubs_epi16(v, ones8);
      const __m256i t = _mm256_add_epi16(p, _mm256_srli_epi64(p, 32));  // lanes 0, 1 of each 64 bits
      most = _mm256_max_epi16(most, _mm256_and_si256(_mm256_add_epi16(t, _mm256_srli_si256(t, 8)), lanes01));
    };
    for (; k + 32 <= whole; k += 32) add(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + k)));
    if (k < whole) add(_mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ar + k))));
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi16(most, c255))) return false;
  }
  return true;
}

bool qcentre_rows_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp, int8_t* lo, int64_t ldl,
                       int32_t* hot_start, uint16_t* hot_k, int64_t max_hot, int32_t* row_const) {
  if (kp > 32768) return false;  // hot_k keeps the sign in its top bit
  return prepare_rows<true>(a, lda, m, kp, reinterpret_cast<uint8_t*>(lo), ldl, hot_start, hot_k, max_hot, row_const);
}

void qpanel_avx2_centred(const int8_t* lo, int64_t lda, int64_t m, const int8_t* bytes, int64_t kq, int64_t n,
                         const int32_t* hot_start, const uint16_t* hot_k, const int32_t* row_const,
                         const int32_t* col_sums, void* c, int64_t ldc, const QEpilogue& ep) {
  // The column term 128 * sum_k b joins the epilogue's column offsets.
  int32_t col_offset[16];
  for (int64_t j = 0; j < std::min<int64_t>(n, 16); ++j) col_offset[j] = ep.col_offset[j] + 128 * col_sums[j];
  QEpilogue e = ep;
  e.col_offset = col_offset;
  // The row term is where the tiles' accumulators start; the listed bytes' +-64 * b(k, :) after.
  auto fix = [&](int64_t i, int64_t mr, __m256i (*acc)[2]) { add_listed<6, true>(bytes, hot_start, hot_k, i, mr, acc); };
  byte_panel_any<true>(reinterpret_cast<const uint8_t*>(lo), lda, m, bytes, kq, n, c, ldc, e, row_const, fix);
}

}  // namespace fusor::int8
