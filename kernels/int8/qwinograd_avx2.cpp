// The AVX2 steps of the exact int8 Winograd F(2x2, 3x3) convolution (kernels/int8/qwinograd.h):
// the input transform, the products on a 6-tile x 16-channel register tile (qpair_rows_avx2.h), the inverse transform
// and the epilogue.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "core/util/error.h"
#include "kernels/int8/qepilogue_avx2.h"
#include "kernels/int8/qpair_rows_avx2.h"
#include "kernels/int8/qwinograd.h"

namespace fusor::int8 {

namespace {

// Tiles of at most this many tiles share the B vectors of a step of k.
constexpr int kMr = 6;

}  // namespace

void qwino_input_avx2(const QWinoGeometry& g, const uint8_t* x, uint8_t flip, int32_t x_zero, int64_t t0, int64_t t1,
                      int16_t* v) {
  const int64_t C = g.in_c, cs = g.cs, per_image = g.tiles_h * g.tiles_w;
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(x_zero));
  const __m128i fl = _mm_set1_epi8(static_cast<char>(flip));
  for (int64_t t = t0; t < t1; ++t, v += 16 * cs) {
    const int64_t n = t / per_image, r = t % per_image, ih0 = 2 * (r / g.tiles_w) - g.pad_t,
                  iw0 = 2 * (r % g.tiles_w) - g.pad_l;
    // The window's pixels (null: outside, d = 0).
    const uint8_t* px[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const int64_t ih = ih0 + i, iw = iw0 + j;
        px[i][j] = ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w ? nullptr
                                                                     : x + ((n * g.in_h + ih) * g.in_w + iw) * C;
      }
    for (int64_t c = 0; c < cs; c += 16) {
      const int64_t left = C - c;
      __m256i d[4][4];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          if (!px[i][j]) {
            d[i][j] = _mm256_setzero_si256();
            continue;
          }
          __m128i b;
          if (left >= 16) {
            b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(px[i][j] + c));
          } else {
            // The last block of a channel count that is not a multiple of 16: the lanes past C are
            // multiplied by U's zero rows.
            alignas(16) uint8_t tmp[16] = {};
            std::memcpy(tmp, px[i][j] + c, static_cast<size_t>(left));
            b = _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
          }
          d[i][j] = _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_xor_si128(b, fl)), zp);
        }
      // Bᵀ d (rows), then (Bᵀ d) B (columns): Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
      __m256i t[4][4];
      for (int j = 0; j < 4; ++j) {
        t[0][j] = _mm256_sub_epi16(d[0][j], d[2][j]);
        t[1][j] = _mm256_add_epi16(d[1][j], d[2][j]);
        t[2][j] = _mm256_sub_epi16(d[2][j], d[1][j]);
        t[3][j] = _mm256_sub_epi16(d[1][j], d[3][j]);
      }
      int16_t* o = v + c;
      for (int i = 0; i < 4; ++i, o += 4 * cs) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(o), _mm256_sub_epi16(t[i][0], t[i][2]));
        _mm256_store_si256(reinterpret_cast<__m256i*>(o + cs), _mm256_add_epi16(t[i][1], t[i][2]));
        _mm256_store_si256(reinterpret_cast<__m256i*>(o + 2 * cs), _mm256_sub_epi16(t[i][2], t[i][1]));
        _mm256_store_si256(reinterpret_cast<__m256i*>(o + 3 * cs), _mm256_sub_epi16(t[i][1], t[i][3]));
      }
    }
  }
}

namespace {

// m[r][0..15] = sum over pairs k of a_r[2k, 2k+1] . b[k] for R tiles (a_r = a + r * a_stride).
template <int R>
[[gnu::always_inline]] inline void wino_products(const int16_t* a, int64_t a_stride, const int16_t* b, int64_t kpairs,
                                                 int32_t* m) {
  __m256i acc[R][2];
  qpair_rows_avx2<R>(a, a_stride, reinterpret_cast<const int8_t*>(b), kpairs, acc);
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(m + r * 16), acc[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(m + r * 16 + 8), acc[r][1]);
  }
}

// One position's products of tiles [0, nt) (a: the first tile's transform at that position,
// tiles a_stride apart) with one panel's B for it: m[t][16], 6 tiles at a time.
void wino_position(const int16_t* a, int64_t a_stride, const int16_t* b, int64_t kpairs, int64_t nt, int32_t* m) {
  int64_t t = 0;
  for (; t + kMr <= nt; t += kMr) wino_products<kMr>(a + t * a_stride, a_stride, b, kpairs, m + t * 16);
  switch (nt - t) {
    case 5: wino_products<5>(a + t * a_stride, a_stride, b, kpairs, m + t * 16); break;
    case 4: wino_products<4>(a + t * a_stride, a_stride, b, kpairs, m + t * 16); break;
    case 3: wino_products<3>(a + t * a_stride, a_stride, b, kpairs, m + t * 16); break;
    case 2: wino_products<2>(a + t * a_stride, a_stride, b, kpairs, m + t * 16); break;
    case 1: wino_products<1>(a + t * a_stride, a_stride, b, kpairs, m + t * 16); break;
    default: break;
  }
}

}  // namespace

void qwino_tiles_avx2(const QWinoGeometry& g, const int16_t* v, int64_t t0, int64_t t1, const int16_t* u, int64_t p0,
                      int64_t p1, const QEpilogue& ep, void* y) {
  // m[position][tile][16]: a panel's products for every tile of the call, so that each position's
  // B (at most 16 KB) stays in L1 while it meets every tile, and U passes once per call.
  alignas(64) int32_t m[16 * kQWinoMaxTiles * 16];
  const int64_t nt = t1 - t0;
  if (nt > kQWinoMaxTiles) throw_internal("qwino_tiles_avx2: more tiles than its buffer");
  const int64_t per_image = g.tiles_h * g.tiles_w, panel_u = 16 * g.kpairs * 32, esize = ep.out_bytes();
  const int64_t a_stride = 16 * g.cs;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t oc0 = p * 16;
    const int16_t* up = u + p * panel_u;
    for (int q = 0; q < 16; ++q)
      wino_position(v + q * g.cs, a_stride, up + q * g.kpairs * 32, g.kpairs, nt, m + q * nt * 16);
    const QEpilogue pe = ep.offset(0, oc0);
    QEpilogueAvx2 e(pe, std::min<int64_t>(16, g.out_c - oc0));
    e.load_column(0);
    e.load_column(1);
    void* yp = static_cast<char*>(y) + oc0 * esize;
    for (int64_t r = 0; r < nt; ++r) {
      const int64_t tile = t0 + r, n = tile / per_image, q = tile % per_image;
      const int64_t oh = 2 * (q / g.tiles_w), ow = 2 * (q % g.tiles_w);
      // Aᵀ M A on both vectors: Aᵀ = [1 1 1 0; 0 1 -1 -1]; the result is 4 Y.
      __m256i out[2][2][2];
      for (int vec = 0; vec < 2; ++vec) {
        auto at = [&](int i, int j) {
          return _mm256_load_si256(reinterpret_cast<const __m256i*>(m + ((4 * i + j) * nt + r) * 16 + 8 * vec));
        };
        __m256i s0[4], s1[4];
        for (int j = 0; j < 4; ++j) {
          const __m256i a0 = at(0, j), a1 = at(1, j), a2 = at(2, j), a3 = at(3, j);
          s0[j] = _mm256_add_epi32(_mm256_add_epi32(a0, a1), a2);
          s1[j] = _mm256_sub_epi32(_mm256_sub_epi32(a1, a2), a3);
        }
        const __m256i* s[2] = {s0, s1};
        for (int i = 0; i < 2; ++i) {
          out[i][0][vec] = _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(s[i][0], s[i][1]), s[i][2]), 2);
          out[i][1][vec] = _mm256_srai_epi32(_mm256_sub_epi32(_mm256_sub_epi32(s[i][1], s[i][2]), s[i][3]), 2);
        }
      }
      for (int i = 0; i < 2; ++i) {
        if (oh + i >= g.out_h) break;
        for (int j = 0; j < 2; ++j) {
          if (ow + j >= g.out_w) break;
          const int64_t pix = (n * g.out_h + oh + i) * g.out_w + ow + j;
          if (e.packs16()) {
            e.store16(out[i][j][0], out[i][j][1], pix, yp, g.out_c);
          } else {
            e.store(out[i][j][0], pix, 0, yp, g.out_c);
            e.store(out[i][j][1], pix, 1, yp, g.out_c);
          }
        }
      }
    }
  }
}

}  // namespace fusor::int8
