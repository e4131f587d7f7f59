// The AVX2 steps of the exact int8 Winograd convolutions F(2x2, 3x3) and F(4x4, 3x3)
// (kernels/int8/qwinograd.h): the input transforms, the products on a 6-tile x 16-channel register
// tile (qpair_rows_avx2.h), the inverse transforms with the epilogue.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/util/error.h"
#include "kernels/int8/qepilogue_avx2.h"
#include "kernels/int8/qpair_rows_avx2.h"
#include "kernels/int8/qwinograd.h"

namespace fusor::int8 {

namespace {

// Tiles of at most this many tiles share the B vectors of a step of k.
constexpr int kMr = 6;

// Bᵀ applied to 4 values, F(2,3): Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
inline void bt2(const __m256i* d, __m256i* o) {
  o[0] = _mm256_sub_epi16(d[0], d[2]);
  o[1] = _mm256_add_epi16(d[1], d[2]);
  o[2] = _mm256_sub_epi16(d[2], d[1]);
  o[3] = _mm256_sub_epi16(d[1], d[3]);
}

// Bᵀ applied to 6 values, F(4,3) (points 0, 1, -1, 2, -2, ∞):
//   [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
// in int16 (|result| <= 10 * 255 after one pass, 100 * 255 = 25500 after two).
inline void bt4(const __m256i* d, __m256i* o) {
  auto x4 = [](__m256i v) { return _mm256_slli_epi16(v, 2); };
  auto x2 = [](__m256i v) { return _mm256_slli_epi16(v, 1); };
  const __m256i s12 = _mm256_add_epi16(d[1], d[2]), d12 = _mm256_sub_epi16(d[1], d[2]);
  const __m256i s34 = _mm256_add_epi16(d[3], d[4]), d43 = _mm256_sub_epi16(d[4], d[3]);
  const __m256i d42 = _mm256_sub_epi16(d[4], d[2]), d31 = x2(_mm256_sub_epi16(d[3], d[1]));
  o[0] = _mm256_add_epi16(_mm256_sub_epi16(x4(_mm256_sub_epi16(d[0], d[2])), d[2]), d[4]);
  o[1] = _mm256_sub_epi16(s34, x4(s12));
  o[2] = _mm256_add_epi16(d43, x4(d12));
  o[3] = _mm256_add_epi16(d42, d31);
  o[4] = _mm256_sub_epi16(d42, d31);
  o[5] = _mm256_add_epi16(_mm256_sub_epi16(x4(_mm256_sub_epi16(d[1], d[3])), d[3]), d[5]);
}

template <int M>
void input_tiles(const QWinoGeometry& g, const uint8_t* x, uint8_t flip, int32_t x_zero, int64_t t0, int64_t t1,
                 int16_t* v) {
  constexpr int A = M + 2;
  const int64_t C = g.in_c, cs = g.cs, per_image = g.tiles_h * g.tiles_w;
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(x_zero));
  const __m128i fl = _mm_set1_epi8(static_cast<char>(flip));
  for (int64_t t = t0; t < t1; ++t, v += A * A * cs) {
    const int64_t n = t / per_image, r = t % per_image, ih0 = M * (r / g.tiles_w) - g.pad_t,
                  iw0 = M * (r % g.tiles_w) - g.pad_l;
    // The window's pixels (null: outside, d = 0).
    const uint8_t* px[A][A];
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < A; ++j) {
        const int64_t ih = ih0 + i, iw = iw0 + j;
        px[i][j] = ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w ? nullptr
                                                                     : x + ((n * g.in_h + ih) * g.in_w + iw) * C;
      }
    for (int64_t c = 0; c < cs; c += 16) {
      const int64_t left = C - c;
      // Bᵀ d by columns: column j of the window through Bᵀ into t[.][j].
      __m256i t[A][A];
      for (int j = 0; j < A; ++j) {
        __m256i d[A];
        for (int i = 0; i < A; ++i) {
          if (!px[i][j]) {
            d[i] = _mm256_setzero_si256();
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
          d[i] = _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_xor_si128(b, fl)), zp);
        }
        __m256i o[A];
        if constexpr (M == 2) bt2(d, o); else bt4(d, o);
        for (int i = 0; i < A; ++i) t[i][j] = o[i];
      }
      // (Bᵀ d) B: each row of t through Bᵀ, into positions A * i + j.
      int16_t* out = v + c;
      for (int i = 0; i < A; ++i) {
        __m256i o[A];
        if constexpr (M == 2) bt2(t[i], o); else bt4(t[i], o);
        for (int j = 0; j < A; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(out + (A * i + j) * cs), o[j]);
      }
    }
  }
}

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

// The inverse transform of F(2,3), Aᵀ = [1 1 1 0; 0 1 -1 -1], on 4 values.
inline void at2(const __m256i* s, __m256i* o) {
  o[0] = _mm256_add_epi32(_mm256_add_epi32(s[0], s[1]), s[2]);
  o[1] = _mm256_sub_epi32(_mm256_sub_epi32(s[1], s[2]), s[3]);
}

// F(4,3)'s inverse transform with U's row scales folded in (kernels/int8/qwinograd.h):
// E = [6 4 4 1 1 0; 0 4 -4 2 -2 0; 0 4 4 4 4 0; 0 4 -4 8 -8 24], on 6 values.
inline void at4(const __m256i* s, __m256i* o) {
  auto sh = [](__m256i v, int k) { return _mm256_slli_epi32(v, k); };
  const __m256i s12 = _mm256_add_epi32(s[1], s[2]), d12 = sh(_mm256_sub_epi32(s[1], s[2]), 2);
  const __m256i s34 = _mm256_add_epi32(s[3], s[4]), d34 = _mm256_sub_epi32(s[3], s[4]);
  o[0] = _mm256_add_epi32(_mm256_add_epi32(sh(_mm256_add_epi32(sh(s[0], 1), s[0]), 1), sh(s12, 2)), s34);
  o[1] = _mm256_add_epi32(d12, sh(d34, 1));
  o[2] = sh(_mm256_add_epi32(s12, s34), 2);
  o[3] = _mm256_add_epi32(_mm256_add_epi32(d12, sh(d34, 3)), sh(_mm256_add_epi32(sh(s[5], 1), s[5]), 3));
}

// The result from the transform's scaled sum: F(2,3) gives 4Y (exact: >> 2); F(4,3) gives 576Y
// modulo 2^32, from which Y follows when |Y| < 2^25 (the header has the argument).
template <int M>
inline __m256i unscale(__m256i v) {
  if constexpr (M == 2) {
    return _mm256_srai_epi32(v, 2);
  } else {
    // 576 = 64 * 9: bits 6.. are 9Y mod 2^26; times 9's inverse mod 2^26, sign-extended from bit 25.
    const __m256i y = _mm256_mullo_epi32(_mm256_srli_epi32(v, 6), _mm256_set1_epi32(kQWinoInverse9));
    return _mm256_srai_epi32(_mm256_slli_epi32(y, 6), 6);
  }
}

template <int M>
void tiles_out(const QWinoGeometry& g, const int16_t* v, int64_t t0, int64_t t1, const int16_t* u, int64_t p0,
               int64_t p1, const QEpilogue& ep, void* y, int32_t* m) {
  constexpr int A = M + 2, P = A * A;
  // m[position][tile][16]: a panel's products for every tile of the call, so that each position's
  // B (at most 16 KB) stays in L1 while it meets every tile, and U passes once per call.
  const int64_t nt = t1 - t0;
  if (nt * P > kQWinoBufferTiles) throw_internal("qwino_tiles_avx2: more tiles than its buffer");
  const int64_t per_image = g.tiles_h * g.tiles_w, panel_u = P * g.kpairs * 32, esize = ep.out_bytes();
  const int64_t a_stride = P * g.cs;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t oc0 = p * 16;
    const int16_t* up = u + p * panel_u;
    for (int q = 0; q < P; ++q)
      wino_position(v + q * g.cs, a_stride, up + q * g.kpairs * 32, g.kpairs, nt, m + q * nt * 16);
    const QEpilogue pe = ep.offset(0, oc0);
    QEpilogueAvx2 e(pe, std::min<int64_t>(16, g.out_c - oc0));
    e.load_column(0);
    e.load_column(1);
    void* yp = static_cast<char*>(y) + oc0 * esize;
    for (int64_t r = 0; r < nt; ++r) {
      const int64_t tile = t0 + r, n = tile / per_image, q = tile % per_image;
      const int64_t oh = M * (q / g.tiles_w), ow = M * (q % g.tiles_w);
      __m256i out[M][M][2];
      for (int vec = 0; vec < 2; ++vec) {
        // Columns first: s[i][j] = (Aᵀ M)[i][j], then each row i through Aᵀ.
        __m256i s[M][A];
        for (int j = 0; j < A; ++j) {
          __m256i col[A], o[M];
          for (int i = 0; i < A; ++i)
            col[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(m + ((A * i + j) * nt + r) * 16 + 8 * vec));
          if constexpr (M == 2) at2(col, o); else at4(col, o);
          for (int i = 0; i < M; ++i) s[i][j] = o[i];
        }
        for (int i = 0; i < M; ++i) {
          __m256i o[M];
          if constexpr (M == 2) at2(s[i], o); else at4(s[i], o);
          for (int j = 0; j < M; ++j) out[i][j][vec] = unscale<M>(o[j]);
        }
      }
      for (int i = 0; i < M; ++i) {
        if (oh + i >= g.out_h) break;
        for (int j = 0; j < M; ++j) {
          if (ow + j >= g.out_w) break;
          const int64_t pix = (n * g.out_h + oh + i) * g.out_w + ow + j;
          if (e.direct16()) {
            e.store16_direct(out[i][j][0], out[i][j][1], pix, yp, g.out_c);
          } else if (e.packs16()) {
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

// Rows of the integer G' (kernels/int8/qwinograd.cpp: 2G of F(2,3), D G of F(4,3)) applied to
// three vectors of 16 output channels (int16: |G' g| <= 7 * 255).
template <int M>
inline void apply_g(__m256i a, __m256i b, __m256i c, __m256i* out) {
  const __m256i ac = _mm256_add_epi16(a, c);
  if constexpr (M == 2) {
    out[0] = _mm256_add_epi16(a, a);
    out[1] = _mm256_add_epi16(ac, b);
    out[2] = _mm256_sub_epi16(ac, b);
    out[3] = _mm256_add_epi16(c, c);
  } else {
    const __m256i a4c = _mm256_add_epi16(a, _mm256_slli_epi16(c, 2)), b2 = _mm256_add_epi16(b, b);
    out[0] = a;
    out[1] = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_add_epi16(ac, b));
    out[2] = _mm256_sub_epi16(b, ac);
    out[3] = _mm256_add_epi16(a4c, b2);
    out[4] = _mm256_sub_epi16(a4c, b2);
    out[5] = c;
  }
}

template <int M>
void filters(const int16_t* g, int64_t out_c, int64_t in_c, int64_t kpairs, int64_t panel, int16_t* u) {
  constexpr int A = M + 2;
  // A panel's weights as [c][tap][16 output channels] (zeros past out_c), then per input channel
  // U = G' g G'ᵀ for the 16 output channels at once, and per pair of input channels each
  // position's 32 int16 (16 channels x the pair) interleaved and stored.
  std::vector<int16_t> gp(static_cast<size_t>(in_c * 9 * 16));
  for (int64_t oc0 = 0; oc0 < out_c; oc0 += 16) {
    const int64_t n = std::min<int64_t>(16, out_c - oc0);
    if (n < 16) std::fill(gp.begin(), gp.end(), int16_t{0});  // a last, partial panel: zero lanes
    for (int64_t o = 0; o < n; ++o) {
      const int16_t* row = g + (oc0 + o) * in_c * 9;
      for (int64_t i = 0; i < in_c * 9; ++i) gp[static_cast<size_t>(i * 16 + o)] = row[i];
    }
    int16_t* up = u + (oc0 / 16) * panel;
    for (int64_t k = 0; k < kpairs; ++k) {
      __m256i uv[2][A * A];
      for (int e = 0; e < 2; ++e) {
        const int64_t c = 2 * k + e;
        if (c >= in_c) {
          for (int q = 0; q < A * A; ++q) uv[e][q] = _mm256_setzero_si256();
          continue;
        }
        __m256i w[9], tmp[A][3];
        for (int t = 0; t < 9; ++t)
          w[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(gp.data() + (c * 9 + t) * 16));
        for (int j = 0; j < 3; ++j) {
          __m256i col[A];
          apply_g<M>(w[j], w[3 + j], w[6 + j], col);
          for (int i = 0; i < A; ++i) tmp[i][j] = col[i];
        }
        for (int i = 0; i < A; ++i) apply_g<M>(tmp[i][0], tmp[i][1], tmp[i][2], uv[e] + A * i);
      }
      for (int q = 0; q < A * A; ++q) {
        // [oc][e] pairs: unpacks work within 128-bit lanes (channels 0-3 | 8-11 and 4-7 | 12-15).
        const __m256i lo = _mm256_unpacklo_epi16(uv[0][q], uv[1][q]), hi = _mm256_unpackhi_epi16(uv[0][q], uv[1][q]);
        int16_t* dst = up + (q * kpairs + k) * 32;
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
      }
    }
  }
}

}  // namespace

void qwino_filters_avx2(const int16_t* g, int64_t out_c, int64_t in_c, int m, int64_t kpairs, int64_t panel,
                        int16_t* u) {
  if (m == 4) {
    filters<4>(g, out_c, in_c, kpairs, panel, u);
  } else {
    filters<2>(g, out_c, in_c, kpairs, panel, u);
  }
}

void qwino_input_avx2(const QWinoGeometry& g, const uint8_t* x, uint8_t flip, int32_t x_zero, int64_t t0, int64_t t1,
                      int16_t* v) {
  if (g.m == 4) {
    input_tiles<4>(g, x, flip, x_zero, t0, t1, v);
  } else {
    input_tiles<2>(g, x, flip, x_zero, t0, t1, v);
  }
}

void qwino_tiles_avx2(const QWinoGeometry& g, const int16_t* v, int64_t t0, int64_t t1, const int16_t* u, int64_t p0,
                      int64_t p1, const QEpilogue& ep, void* y, int32_t* m) {
  if (g.m == 4) {
    tiles_out<4>(g, v, t0, t1, u, p0, p1, ep, y, m);
  } else {
    tiles_out<2>(g, v, t0, t1, u, p0, p1, ep, y, m);
  }
}

}  // namespace fusor::int8
