// The Winograd strip (winograd_kernels.h) written once over a vector type V (kernels/gemm/simd.h)
// and compiled per ISA. Include only from the per-ISA files, after simd.h. The transforms are
// linear combinations with the compile-time coefficients of matrices.h (zeros skipped, ±1 as
// add/sub), so one template serves every tile size.
#pragma once
#include <cstdint>
#include <utility>

#include "kernels/winograd/matrices.h"
#include "kernels/winograd/winograd_kernels.h"

namespace fusor::FUSOR_SIMD_NS::wino {

using winograd_detail::StripArgs;

// No std:: inline code in wide-ISA files (see simd.h): the linker could pick this copy for baseline code.
inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

// sum_i c[i] * d[i * stride] over the nonzero coefficients of a compile-time row.
template <class V, int N>
[[gnu::always_inline]] inline typename V::reg lincomb(const float (&c)[N], const typename V::reg* d, int stride) {
  typename V::reg acc = V::zero();
  bool first = true;
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    const float ci = c[i];
    if (ci == 0) continue;
    const typename V::reg x = d[i * stride];
    if (first) acc = ci == 1 ? x : V::mul(x, V::set1(ci));
    else if (ci == 1) acc = V::add(acc, x);
    else if (ci == -1) acc = V::sub(acc, x);
    else acc = V::fma(x, V::set1(ci), acc);
    first = false;
  }
  return acc;
}

#if defined(__AVX512F__)
// r[0..16) := its transpose (r[i] lane j <- r[j] lane i).
[[gnu::always_inline]] inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + c], 128-bit lane L: rows 4g..4g+3 of column 4L + c.
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    const __m512d a0 = _mm512_castps_pd(t[4 * g]), a1 = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d a2 = _mm512_castps_pd(t[4 * g + 2]), a3 = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    const __m512 vlo = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), vhi = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd);
    const __m512 wlo = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88),
                 whi = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);
    r[c] = _mm512_shuffle_f32x4(vlo, wlo, 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(vlo, wlo, 0xdd);
    r[4 + c] = _mm512_shuffle_f32x4(vhi, whi, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(vhi, whi, 0xdd);
  }
}
#endif

// Step 1: the strip's input rows (rows_p = tile_rows * m + 2, Wp = TW * m + 2) into xs[cg][row][col][lane].
// Blocked input: lane group cg is lanes [c0 % B, c0 % B + L) of block c0 / B (L divides B), so each
// padded row is a strided copy of vectors; channels past C (the last block's padding lanes) read
// as zero.
template <class V>
void pack_input_blocked(const StripArgs& s, int64_t rows_p, int64_t Wp) {
  constexpr int L = V::kWidth;
  const int64_t B = s.block, Cg = s.Cp / L;
  const int64_t w_lo = imax(0, -s.iw0), w_hi = imin(Wp, s.W - s.iw0);
  for (int64_t cg = 0; cg < Cg; ++cg) {
    const int64_t c0 = cg * L, nc = imin(L, s.C - c0);
    for (int64_t r = 0; r < rows_p; ++r) {
      float* dst = s.xs + (cg * rows_p + r) * Wp * L;
      const int64_t ih = s.ih0 + r;
      if (ih < 0 || ih >= s.H || w_lo >= w_hi) {
        for (int64_t w = 0; w < Wp; ++w) V::store(dst + w * L, V::zero());
        continue;
      }
      const float* src = s.x + ((c0 / B * s.H + ih) * s.W + s.iw0) * B + c0 % B;
      for (int64_t w = 0; w < w_lo; ++w) V::store(dst + w * L, V::zero());
      if (nc == L)
        for (int64_t w = w_lo; w < w_hi; ++w) V::store(dst + w * L, V::load(src + w * B));
      else
        for (int64_t w = w_lo; w < w_hi; ++w) V::store(dst + w * L, V::load_n(src + w * B, static_cast<int>(nc)));
      for (int64_t w = w_hi; w < Wp; ++w) V::store(dst + w * L, V::zero());
    }
  }
}

template <class V>
void pack_input(const StripArgs& s, int64_t rows_p, int64_t Wp) {
  if (s.block > 0) return pack_input_blocked<V>(s, rows_p, Wp);
  constexpr int L = V::kWidth;
  const int64_t Cg = s.Cp / L;
  const int64_t w_lo = imax(0, -s.iw0), w_hi = imin(Wp, s.W - s.iw0);
#if defined(__AVX512F__)
  if constexpr (L == 16) {
    // 16 channel rows x 16 columns at a time, transposed to 16 column vectors of 16 channels.
    for (int64_t cg = 0; cg < Cg; ++cg)
      for (int64_t r = 0; r < rows_p; ++r) {
        float* dst = s.xs + (cg * rows_p + r) * Wp * L;
        const int64_t ih = s.ih0 + r;
        const int64_t nc = imin(L, s.C - cg * L);
        if (ih < 0 || ih >= s.H || w_lo >= w_hi) {
          for (int64_t w = 0; w < Wp; ++w) _mm512_storeu_ps(dst + w * L, _mm512_setzero_ps());
          continue;
        }
        const float* src = s.x + (cg * L * s.H + ih) * s.W + s.iw0;
        for (int64_t w0 = 0; w0 < Wp; w0 += 16) {
          // Lanes j with w_lo <= w0 + j < w_hi hold data; the others (padding) are zero.
          const int64_t lo = imax(0, w_lo - w0), hi = imin(16, w_hi - w0);
          const __mmask16 mask = hi > lo ? static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1)) : 0;
          __m512 rows[16];
#pragma GCC unroll 16
          for (int c = 0; c < 16; ++c)
            rows[c] = c < nc ? _mm512_maskz_loadu_ps(mask, src + c * s.H * s.W + w0) : _mm512_setzero_ps();
          transpose16(rows);
          const int64_t nw = imin(16, Wp - w0);
          for (int64_t j = 0; j < nw; ++j) _mm512_storeu_ps(dst + (w0 + j) * L, rows[j]);
        }
      }
    return;
  }
#endif
  for (int64_t cg = 0; cg < Cg; ++cg) {
    for (int64_t r = 0; r < rows_p; ++r) {
      float* dst = s.xs + (cg * rows_p + r) * Wp * L;
      const int64_t ih = s.ih0 + r;
      for (int l = 0; l < L; ++l) {
        const int64_t c = cg * L + l;
        if (c >= s.C || ih < 0 || ih >= s.H || w_lo >= w_hi) {
          for (int64_t w = 0; w < Wp; ++w) dst[w * L + l] = 0.0f;
          continue;
        }
        const float* src = s.x + (c * s.H + ih) * s.W + s.iw0;
        for (int64_t w = 0; w < w_lo; ++w) dst[w * L + l] = 0.0f;
        for (int64_t w = w_lo; w < w_hi; ++w) dst[w * L + l] = src[w];
        for (int64_t w = w_hi; w < Wp; ++w) dst[w * L + l] = 0.0f;
      }
    }
  }
}

// Step 2: v[ξ][cg][tile][lane] = (Bᵀ d B)[ξ] for each tile of the strip and channel block.
template <class V, int M>
void input_transform(const StripArgs& s, int64_t rows_p, int64_t Wp, int64_t nt) {
  using reg = typename V::reg;
  using Mx = winograd::Matrices<M>;
  constexpr int A = M + 2, L = V::kWidth;
  const int64_t Cg = s.Cp / L;
  const int64_t xi_stride = Cg * nt * L;
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t tr = t / s.TW, tx = t % s.TW;
    for (int64_t cg = 0; cg < Cg; ++cg) {
      const float* base = s.xs + ((cg * rows_p + tr * M) * Wp + tx * M) * L;
      reg d[A][A], row[A][A];
#pragma GCC unroll 8
      for (int i = 0; i < A; ++i) {
#pragma GCC unroll 8
        for (int j = 0; j < A; ++j) d[i][j] = V::load(base + (i * Wp + j) * L);
#pragma GCC unroll 8
        for (int k = 0; k < A; ++k) row[i][k] = lincomb<V, A>(Mx::BT[k], &d[i][0], 1);  // (d B)[i][k]
      }
      float* out = s.v + (cg * nt + t) * L;
#pragma GCC unroll 8
      for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
        for (int k = 0; k < A; ++k) V::store(out + (i * A + k) * xi_stride, lincomb<V, A>(Mx::BT[i], &row[0][k], A));
    }
  }
}

// Step 3: c[i][0..NR) = Σ_c a[i][c] * b[c][0..NR) for MR tiles: a is v_ξ (channel blocks cg apart
// by a_cg_stride, tile i at i * L, lane cc), b is U_ξ packed [Cp][NR].
template <class V, int MR, int NV>
void gemm_tile(int64_t Cg, const float* __restrict a, int64_t a_cg_stride, const float* __restrict b,
               float* __restrict c) {
  using reg = typename V::reg;
  constexpr int L = V::kWidth, NR = NV * L;
  reg acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
  for (int64_t cg = 0; cg < Cg; ++cg) {
#pragma GCC unroll 16
    for (int cc = 0; cc < L; ++cc) {
      reg bv[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) bv[j] = V::load(b + cc * NR + j * L);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const reg av = V::set1(a[i * L + cc]);
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
      }
    }
    a += a_cg_stride;
    b += L * NR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) V::store(c + i * NR + j * L, acc[i][j]);
}

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, float*);

template <class V, int NV, class Seq>
struct TileTable;
template <class V, int NV, int... I>
struct TileTable<V, NV, std::integer_sequence<int, I...>> {
  static constexpr TileFn fns[sizeof...(I)] = {&gemm_tile<V, I + 1, NV>...};
};

// Step 4: Aᵀ M A per tile and lane group g < ng into ys[g][row][col][lane].
template <class V, int M, int NR>
void output_transform(const StripArgs& s, int64_t nt, int ng) {
  using reg = typename V::reg;
  using Mx = winograd::Matrices<M>;
  constexpr int A = M + 2, L = V::kWidth;
  const int64_t rows_o = s.tile_rows * M, OWp = s.TW * M;
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t tr = t / s.TW, tx = t % s.TW;
    for (int g = 0; g < ng; ++g) {
      const float* in = s.mbuf + t * NR + g * L;
      reg mm[A][A], col[A][M];
#pragma GCC unroll 8
      for (int i = 0; i < A; ++i) {
#pragma GCC unroll 8
        for (int j = 0; j < A; ++j) mm[i][j] = V::load(in + (i * A + j) * nt * NR);
#pragma GCC unroll 8
        for (int q = 0; q < M; ++q) col[i][q] = lincomb<V, A>(Mx::AT[q], &mm[i][0], 1);  // (M A)[i][q]
      }
      float* out = s.ys + ((g * rows_o + tr * M) * OWp + tx * M) * L;
#pragma GCC unroll 8
      for (int p = 0; p < M; ++p)
#pragma GCC unroll 8
        for (int q = 0; q < M; ++q) V::store(out + (p * OWp + q) * L, lincomb<V, A>(Mx::AT[p], &col[0][q], M));
    }
  }
}

// Step 4': ys's valid rows and columns into Y (NCHW) for output channels [k0, k0 + ng * L) ∩ [0, K).
// Blocked output: lane group g is lanes [k % B, k % B + L) of block k / B (k = k0 + g * L), stored
// as act(m + bias + z) with a clamp activation applied here (the others by the driver). Padding
// lanes get act(0 + 0 + z's lane): U and the padded bias are zero there.
template <class V, int M>
void unpack_output_blocked(const StripArgs& s, int64_t k0, int ng) {
  using reg = typename V::reg;
  constexpr int L = V::kWidth;
  const int64_t B = s.block, rows_o = s.tile_rows * M, OWp = s.TW * M;
  const int64_t rows = imin(rows_o, s.OH - s.oh0);
  const reg lo = V::set1(s.lo), hi = V::set1(s.hi);
  for (int g = 0; g < ng; ++g) {
    const int64_t k = k0 + g * L;
    const reg bias = s.bias ? V::load(s.bias + k) : V::zero();
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = s.ys + (g * rows_o + r) * OWp * L;
      const int64_t off = ((k / B * s.OH + s.oh0 + r) * s.OW) * B + k % B;
      float* dst = s.y + off;
      const float* z = s.z ? s.z + off : nullptr;
      for (int64_t w = 0; w < s.OW; ++w) {
        reg v = V::add(V::load(src + w * L), bias);
        if (z) v = V::add(v, V::load(z + w * B));
        if (s.clamp) v = V::min(V::max(v, lo), hi);
        V::store(dst + w * B, v);
      }
    }
  }
}

template <class V, int M>
void unpack_output(const StripArgs& s, int64_t k0, int ng) {
  if (s.block > 0) return unpack_output_blocked<V, M>(s, k0, ng);
  constexpr int L = V::kWidth;
  const int64_t rows_o = s.tile_rows * M, OWp = s.TW * M;
  const int64_t rows = imin(rows_o, s.OH - s.oh0);
#if defined(__AVX512F__)
  if constexpr (L == 16) {
    // 16 columns x 16 channels at a time, transposed to 16 channel rows of 16 columns.
    for (int g = 0; g < ng; ++g) {
      const int64_t nk = imin(L, s.K - (k0 + g * L));
      for (int64_t r = 0; r < rows; ++r) {
        const float* src = s.ys + (g * rows_o + r) * OWp * L;
        float* dst = s.y + ((k0 + g * L) * s.OH + s.oh0 + r) * s.OW;
        for (int64_t w0 = 0; w0 < s.OW; w0 += 16) {
          const int64_t nw = imin(16, s.OW - w0);
          __m512 cols[16];
#pragma GCC unroll 16
          for (int j = 0; j < 16; ++j) cols[j] = j < nw ? _mm512_loadu_ps(src + (w0 + j) * L) : _mm512_setzero_ps();
          transpose16(cols);
          const __mmask16 mask = static_cast<__mmask16>((1u << nw) - 1);
          for (int64_t k = 0; k < nk; ++k) _mm512_mask_storeu_ps(dst + k * s.OH * s.OW + w0, mask, cols[k]);
        }
      }
    }
    return;
  }
#endif
  for (int g = 0; g < ng; ++g) {
    for (int l = 0; l < L; ++l) {
      const int64_t k = k0 + g * L + l;
      if (k >= s.K) return;
      for (int64_t r = 0; r < rows; ++r) {
        float* dst = s.y + (k * s.OH + s.oh0 + r) * s.OW;
        const float* src = s.ys + (g * rows_o + r) * OWp * L + l;
        for (int64_t w = 0; w < s.OW; ++w) dst[w] = src[w * L];
      }
    }
  }
}

template <class V, int M, int MR, int NV>
void strip(const StripArgs& s) {
  constexpr int A = M + 2, L = V::kWidth, NR = NV * L;
  using Table = TileTable<V, NV, std::make_integer_sequence<int, MR>>;
  const int64_t rows_p = s.tile_rows * M + 2, Wp = s.TW * M + 2, nt = s.tile_rows * s.TW;
  const int64_t Cg = s.Cp / L;
  pack_input<V>(s, rows_p, Wp);
  input_transform<V, M>(s, rows_p, Wp, nt);
  for (int64_t kb = s.kb0; kb < s.kb1; ++kb) {
    const float* ub = s.u + kb * A * A * s.Cp * NR;
    for (int xi = 0; xi < A * A; ++xi) {
      const float* a = s.v + xi * Cg * nt * L;
      const float* b = ub + xi * s.Cp * NR;
      float* c = s.mbuf + xi * nt * NR;
      for (int64_t t0 = 0; t0 < nt; t0 += MR) {
        const int mr = nt - t0 < MR ? static_cast<int>(nt - t0) : MR;
        Table::fns[mr - 1](Cg, a + t0 * L, nt * L, b, c + t0 * NR);
      }
    }
    const int64_t k0 = kb * NR;
    // Blocked output: every lane of the last block, padding lanes included, is written.
    const int64_t kend = s.block > 0 ? (s.K + s.block - 1) / s.block * s.block : s.K;
    const int ng = static_cast<int>(imin(NR / L, (kend - k0 + L - 1) / L));
    output_transform<V, M, NR>(s, nt, ng);
    unpack_output<V, M>(s, k0, ng);
  }
}

template <class V, int MR, int NV>
void strip_any(const StripArgs& s) {
  if (s.m == 2) strip<V, 2, MR, NV>(s);
  else strip<V, 4, MR, NV>(s);
}

}  // namespace fusor::FUSOR_SIMD_NS::wino
