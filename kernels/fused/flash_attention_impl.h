// The per-ISA attention tile (flash_attention_tile.h) written once over a vector type V
// (kernels/gemm/simd.h). Include only from the flash_attention_<isa>.cpp files, after simd.h.
//
// A task's rows are processed in register tiles of MR rows, each against a chunk of up to
// kMaxChunk keys (all of them up to that length) at a time:
//   queries Q'[MR x d] = scale * log2(e) * Q[MR rows], copied into the workspace (contiguous)
//   scores  S[MR x chunk] = Q' x K^T[:, chunk], 64 keys at a time (Q' broadcast, K^T rows loaded
//           as vectors from its panels: MR x NS accumulators)
//   softmax per row, in base 2: t = s (+ log2(e) * mask), chunk max, p = 2^(t - max) with the
//           running max and sum updated; the row's output is rescaled by 2^(old max - new max)
//           when a later chunk raises it
//   P x V   Y[MR x dv] (=, then +=) P x V[chunk]   (P broadcast, V rows loaded in place: MR x NP
//           accumulators per chunk of NP vectors of columns, held over the whole chunk of keys)
// Y's rows are divided by the row sums at the end.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "kernels/fused/flash_attention_tile.h"

namespace fusor::FUSOR_SIMD_NS {

using fused::flash::kKeyBlock;
using fused::flash::TileArgs;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- register-blocked products ----

// s[i * lds + j] = sum_c q[i * ldq + c] * kt[c * ldkt + j], rows i < MR, keys j < n, where
// (NV - 1) * W < n <= NV * W; lanes past n are stored as 0.
template <class V, int MR, int NV, bool kTail>
void scores_impl(const float* q, int64_t ldq, const float* kt, int64_t ldkt, int64_t d, int n, float* s, int64_t lds) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  const int last = n - (NV - 1) * W;
  reg acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
  int64_t c = 0;
  if constexpr (NV == 1) {
    // One vector of keys (a sequence's last few: vit_tiny's 197 = 3 x 64 + 5) gives MR
    // accumulators, fewer than the FMA latency times its issue rate covers: odd steps go to a
    // second set, halving the chains (the sum is then taken in another order).
    reg acc2[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) acc2[i] = V::zero();
    for (; c + 2 <= d; c += 2) {
      const float* kr = kt + c * ldkt;
      const reg b0 = kTail ? V::load_n(kr, last) : V::load(kr);
      const reg b1 = kTail ? V::load_n(kr + ldkt, last) : V::load(kr + ldkt);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        acc[i][0] = V::fma(V::set1(q[i * ldq + c]), b0, acc[i][0]);
        acc2[i] = V::fma(V::set1(q[i * ldq + c + 1]), b1, acc2[i]);
      }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) acc[i][0] = V::add(acc[i][0], acc2[i]);
  }
  for (; c < d; ++c) {
    const float* kr = kt + c * ldkt;
    reg b[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) b[j] = (kTail && j == NV - 1) ? V::load_n(kr + j * W, last) : V::load(kr + j * W);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const reg a = V::set1(q[i * ldq + c]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = V::fma(a, b[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) V::store(s + i * lds + j * W, acc[i][j]);
}

template <class V, int MR, int NV>
void scores(const float* q, int64_t ldq, const float* kt, int64_t ldkt, int64_t d, int n, float* s, int64_t lds) {
  if (n == NV * V::kWidth) scores_impl<V, MR, NV, false>(q, ldq, kt, ldkt, d, n, s, lds);
  else scores_impl<V, MR, NV, true>(q, ldq, kt, ldkt, d, n, s, lds);
}

// y[i * ldy + c] (= 0 first, else +=) sum_{j < n} p[i * ldp + j] * v[j * ldv + c], rows i < MR,
// columns c < (NV - 1) * W + last.
template <class V, int MR, int NV, bool kTail, bool kFirst>
void pv_impl(const float* p, int64_t ldp, const float* v, int64_t ldv, int64_t n, float* y, int64_t ldy, int last) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  reg acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      const float* yp = y + i * ldy + j * W;
      acc[i][j] = kFirst ? V::zero() : (kTail && j == NV - 1) ? V::load_n(yp, last) : V::load(yp);
    }
  for (int64_t k = 0; k < n; ++k) {
    const float* vr = v + k * ldv;
    reg b[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) b[j] = (kTail && j == NV - 1) ? V::load_n(vr + j * W, last) : V::load(vr + j * W);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const reg a = V::set1(p[i * ldp + k]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = V::fma(a, b[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      float* yp = y + i * ldy + j * W;
      if (kTail && j == NV - 1) V::store_n(yp, acc[i][j], last);
      else V::store(yp, acc[i][j]);
    }
}

template <class V, int MR, int NV>
void pv(const float* p, int64_t ldp, const float* v, int64_t ldv, int64_t n, float* y, int64_t ldy, int last, bool first) {
  if (first) {
    if (last == V::kWidth) pv_impl<V, MR, NV, false, true>(p, ldp, v, ldv, n, y, ldy, last);
    else pv_impl<V, MR, NV, true, true>(p, ldp, v, ldv, n, y, ldy, last);
  } else {
    if (last == V::kWidth) pv_impl<V, MR, NV, false, false>(p, ldp, v, ldv, n, y, ldy, last);
    else pv_impl<V, MR, NV, true, false>(p, ldp, v, ldv, n, y, ldy, last);
  }
}

using ScoresFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, int, float*, int64_t);
using PvFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t, int, bool);

// Tables indexed [rows - 1][vectors - 1].
template <class V, int MR, int NS, int NP>
struct Kernels {
  ScoresFn scores_fn[MR][NS];
  PvFn pv_fn[MR][NP];
};

template <class V, int MR, int NS, int NP, int R, int... J>
void fill_row(Kernels<V, MR, NS, NP>& k, std::integer_sequence<int, J...>) {
  ((J < NS ? (k.scores_fn[R][J] = &scores<V, R + 1, (J < NS ? J + 1 : 1)>, 0) : 0), ...);
  ((J < NP ? (k.pv_fn[R][J] = &pv<V, R + 1, (J < NP ? J + 1 : 1)>, 0) : 0), ...);
}

template <class V, int MR, int NS, int NP, int... R>
Kernels<V, MR, NS, NP> make_kernels(std::integer_sequence<int, R...>) {
  Kernels<V, MR, NS, NP> k{};
  constexpr int kMax = NS > NP ? NS : NP;
  (fill_row<V, MR, NS, NP, R>(k, std::make_integer_sequence<int, kMax>{}), ...);
  return k;
}

// ---- the online softmax of one row ----

// t where the bool mask allows, -inf elsewhere; the first n lanes (n <= W) of b are read.
template <class V>
typename V::reg allowed(typename V::reg t, const bool* b, int n) {
#if defined(__AVX512F__)
  if constexpr (V::kWidth == 16) {
    const __m128i bytes = _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1), b);
    return _mm512_mask_blend_ps(_mm_test_epi8_mask(bytes, bytes), _mm512_set1_ps(kNegInf), t);
  }
#endif
  float x[V::kWidth];
  V::store(x, t);
  for (int l = 0; l < n; ++l) x[l] = b[l] ? x[l] : kNegInf;
  return V::load(x);
}

constexpr float kLog2e = 1.44269504088896341f;

// 2^u for u <= 0 (a score minus its row's max, both in base 2), exactly 0 for u = -inf; NaN
// stays NaN. AVX-512: u clamped below at -126 (the max returns its second operand, u, when it is
// NaN), n = round(u), 2^(u - n) by a degree-5 polynomial on [-1/2, 1/2] (a least-squares fit
// weighted to the relative error, ~2.5e-7 in float arithmetic) and 2^n applied by vscalefps, whose
// lanes with u < -126 are zeroed by its mask: 10 operations where V::exp takes 15 and the -inf
// select. Results are never subnormal: on Intel cores a subnormal or underflowing result takes a
// microcode assist of ~100 cycles per instruction (the clamp at -160 this replaced let every
// masked key of bert_like's padding mask, 2^-160, through vscalefps: its attention at S = 128
// took 4.5 ms instead of ~1.2 on a Xeon). 2^u below 2^-126 is 0 here, far below a sum whose
// largest term is 1. AVX2: the same with 2^n put in the exponent field (12 operations).
// 2^f on [-1/2, 1/2]: c[0] + f (c[1] + f (... + f c[5])), the degree-5 fit above.
inline constexpr float kExp2Poly[6] = {1.0000001192092896f, 0.6931469440460205f,  0.24022120237350464f,
                                       0.05550713092088699f, 0.009675510227680206f, 0.0013276379322633147f};

template <class V>
typename V::reg exp2_nonpos(typename V::reg u) {
#if defined(__AVX512F__)
  if constexpr (V::kWidth == 16) {
    const __m512 lo = _mm512_set1_ps(-126.0f);
    const __mmask16 live = _mm512_cmp_ps_mask(u, lo, _CMP_NLT_UQ);  // u >= -126, or NaN
    u = _mm512_max_ps(lo, u);
    const __m512 n = _mm512_roundscale_ps(u, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(u, n);
    __m512 p = _mm512_set1_ps(kExp2Poly[5]);
    for (int i = 4; i >= 0; --i) p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly[i]));
    return _mm512_maskz_scalef_ps(live, p, n);
  }
#elif defined(__AVX2__) && defined(__FMA__)
  // AVX2: the same polynomial, 2^n built in the exponent field. u is clamped below at -127, whose
  // n = -127 gives exponent bits 0, i.e. exactly 0 (for -inf, and for u < -126.5 where 2^u is
  // below the normal range anyway). _mm256_max_ps returns its second operand, u, when u is NaN:
  // the polynomial stays NaN and so does the product.
  if constexpr (V::kWidth == 8) {
    u = _mm256_max_ps(_mm256_set1_ps(-127.0f), u);
    const __m256 n = _mm256_round_ps(u, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 f = _mm256_sub_ps(u, n);
    __m256 p = _mm256_set1_ps(kExp2Poly[5]);
    for (int i = 4; i >= 0; --i) p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2Poly[i]));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  }
#endif
  // Elsewhere the same bound: 0 below -126, exp of the clamped u (never subnormal) otherwise.
  const typename V::reg lo = V::set1(-126.0f);
  return V::lt_select(u, lo, V::zero(), V::exp(V::mul(V::max(lo, u), V::set1(0.693147180559945309f))));
}

// One online-softmax step over n scores of a row (a chunk of its keys), of which the first `vis`
// are visible (causal), in base 2: s holds scale * log2(e) * q.k (the scale folded into the
// query), t = s (+ log2(e) * mask), m' = max(m, max t), s[j] = 2^(t - m') (0 for masked and
// invisible keys), sum = sum * 2^(m - m') + sum_j s[j], m = m'. Returns 2^(m - m'), the factor
// for the row's output so far (1 when nothing in the chunk is visible). Without a mask the
// scores are read twice and written once.
template <class V>
float softmax_row(float* s, int64_t vis, int64_t n, const float* fm, const bool* bm, int64_t mcol, float& m, float& sum) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  alignas(64) static constexpr float kIota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const reg ninf = V::set1(kNegInf);
  auto first = [&](reg t, int r) { return V::lt_select(V::load(kIota), V::set1(static_cast<float>(r)), t, ninf); };
  reg vmax = ninf;
  if (!fm && !bm) {
    // Four running maxima (one would chain every vector's max behind the previous one's latency,
    // and the exp pass waits for the result).
    reg m1 = ninf, m2 = ninf, m3 = ninf;
    int64_t j = 0;
    for (; j + 4 * W <= vis; j += 4 * W) {
      vmax = V::max(vmax, V::load(s + j));
      m1 = V::max(m1, V::load(s + j + W));
      m2 = V::max(m2, V::load(s + j + 2 * W));
      m3 = V::max(m3, V::load(s + j + 3 * W));
    }
    for (; j + W <= vis; j += W) m1 = V::max(m1, V::load(s + j));
    if (j < vis) m2 = V::max(m2, first(V::load_n(s + j, static_cast<int>(vis - j)), static_cast<int>(vis - j)));
    vmax = V::max(V::max(vmax, m1), V::max(m2, m3));
  } else if (mcol == 1) {
    const reg l2e = V::set1(kLog2e);
    for (int64_t j = 0; j < vis; j += W) {
      const int r = static_cast<int>(std::min<int64_t>(W, vis - j));
      reg t = r == W ? V::load(s + j) : V::load_n(s + j, r);
      if (fm) t = V::fma(r == W ? V::load(fm + j) : V::load_n(fm + j, r), l2e, t);
      if (bm) t = allowed<V>(t, bm + j, r);
      if (r < W) t = first(t, r);
      V::store(s + j, t);
      vmax = V::max(vmax, t);
    }
  } else {
    for (int64_t j = 0; j < vis; ++j) {
      float t = s[j];
      if (fm) t = std::fma(fm[j * mcol], kLog2e, t);
      if (bm && !bm[j * mcol]) t = kNegInf;
      s[j] = t;
    }
    for (int64_t j = 0; j < vis; j += W) {
      const int r = static_cast<int>(std::min<int64_t>(W, vis - j));
      reg t = r == W ? V::load(s + j) : V::load_n(s + j, r);
      if (r < W) t = first(t, r);
      vmax = V::max(vmax, t);
    }
  }
  const float bmax = V::hmax(vmax);
  if (bmax == kNegInf) {
    std::memset(s, 0, static_cast<size_t>(n) * sizeof(float));
    return 1.0f;
  }
  const float m_new = m > bmax ? m : bmax;
  const float corr = m == kNegInf ? 0.0f : std::exp2(m - m_new);
  const reg vm = V::set1(m_new);
  reg acc = V::zero(), acc1 = V::zero();
  int64_t j = 0;
  for (; j + 2 * W <= vis; j += 2 * W) {
    const reg p = exp2_nonpos<V>(V::sub(V::load(s + j), vm));
    const reg p1 = exp2_nonpos<V>(V::sub(V::load(s + j + W), vm));
    V::store(s + j, p);
    V::store(s + j + W, p1);
    acc = V::add(acc, p);
    acc1 = V::add(acc1, p1);
  }
  acc = V::add(acc, acc1);
  for (; j + W <= vis; j += W) {
    const reg p = exp2_nonpos<V>(V::sub(V::load(s + j), vm));
    V::store(s + j, p);
    acc = V::add(acc, p);
  }
  if (j < vis) {
    const int r = static_cast<int>(vis - j);
    reg p = exp2_nonpos<V>(V::sub(V::load_n(s + j, r), vm));
    p = V::lt_select(V::load(kIota), V::set1(static_cast<float>(r)), p, V::zero());
    V::store(s + j, p);  // lanes past vis are zero: they are keys the row does not see
    acc = V::add(acc, p);
    j += W;
  }
  if (j < n) std::memset(s + j, 0, static_cast<size_t>(n - j) * sizeof(float));
  sum = sum * corr + V::hsum(acc);
  m = m_new;
  return corr;
}

// ---- one task ----

// dst[c] = k * src[c], c < n (dst may be src).
template <class V>
void scale_row(const float* src, float* dst, int64_t n, typename V::reg k) {
  constexpr int W = V::kWidth;
  int64_t c = 0;
  for (; c + W <= n; c += W) V::store(dst + c, V::mul(V::load(src + c), k));
  if (c < n) V::store_n(dst + c, V::mul(V::load_n(src + c, static_cast<int>(n - c)), k), static_cast<int>(n - c));
}

template <class V, int MR, int NS, int NP>
void attend(const TileArgs& a) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth, KB = kKeyBlock, SC = NS * W, PC = NP * W;
  static_assert(KB % SC == 0, "key block must be a multiple of the scores tile");
  static const Kernels<V, MR, NS, NP> kern = make_kernels<V, MR, NS, NP>(std::make_integer_sequence<int, MR>{});
  const int64_t C = a.chunk;
  float* s = a.work;             // MR x C scores, then probabilities
  float* qs = s + MR * C;        // MR x d: the tile's queries times scale * log2(e)
  float* mx = qs + MR * a.d;     // rows
  float* sum = mx + a.rows;      // rows
  for (int64_t r = 0; r < a.rows; ++r) {
    mx[r] = kNegInf;
    sum[r] = 0.0f;
  }
  const reg qscale = V::set1(a.scale * kLog2e);
  const int64_t key_end = a.causal ? std::clamp<int64_t>(a.causal_first + a.rows, 0, a.keys) : a.keys;
  for (int64_t k0 = 0; k0 < key_end; k0 += C) {
    const int64_t kn = std::min<int64_t>(C, key_end - k0);
    for (int64_t g0 = 0, mr = 0; g0 < a.rows; g0 += mr) {
      // MR rows at a time; the last MR + 1 .. 3 MR / 2 rows as two tiles of about half (64 rows
      // as 8 x 7 + 4 + 4, not 9 x 7 + 1: a one-row tile runs at a fraction of the FMA rate).
      const int64_t rest = a.rows - g0;
      mr = rest > MR && rest < MR + MR / 2 + 1 ? (rest + 1) / 2 : std::min<int64_t>(MR, rest);
      // The keys of the chunk the tile's rows see (with causal, its last row sees the most).
      const int64_t ge = a.causal ? std::clamp<int64_t>(a.causal_first + g0 + mr - k0, 0, kn) : kn;
      if (ge <= 0) continue;
      for (int r = 0; r < mr; ++r) scale_row<V>(a.q + (g0 + r) * a.ldq, qs + r * a.d, a.d, qscale);
      // Scores of the tile's rows against the chunk, key block by key block.
      for (int64_t j = 0; j < ge; j += KB) {
        const float* kt = a.kt + (k0 + j) / KB * a.kt_block;
        const int64_t gn = std::min<int64_t>(KB, ge - j);
        for (int64_t c0 = 0; c0 < gn; c0 += SC) {
          const int n = static_cast<int>(std::min<int64_t>(SC, gn - c0));
          kern.scores_fn[mr - 1][(n + W - 1) / W - 1](qs, a.d, kt + c0, a.ldkt, a.d, n, s + j + c0, C);
        }
      }
      // Probabilities, row by row.
      for (int r = 0; r < mr; ++r) {
        const int64_t i = g0 + r;
        const int64_t vis = a.causal ? std::clamp<int64_t>(a.causal_first + i + 1 - k0, 0, ge) : ge;
        const float* fm = a.fmask ? a.fmask + i * a.mask_row + k0 * a.mask_col : nullptr;
        const bool* bm = a.bmask ? a.bmask + i * a.mask_row + k0 * a.mask_col : nullptr;
        const float corr = softmax_row<V>(s + r * C, vis, ge, fm, bm, a.mask_col, mx[i], sum[i]);
        if (k0 > 0 && corr != 1.0f) scale_row<V>(a.y + i * a.ldy, a.y + i * a.ldy, a.dv, V::set1(corr));  // to the new max
      }
      // P x V over the whole chunk, the output tile held in registers (stored, not added, on the
      // first chunk: a tile's first chunk is the first, it sees key 0 if it sees any).
      for (int64_t c0 = 0; c0 < a.dv; c0 += PC) {
        const int cols = static_cast<int>(std::min<int64_t>(PC, a.dv - c0));
        const int nv = (cols + W - 1) / W;
        kern.pv_fn[mr - 1][nv - 1](s, C, a.v + k0 * a.ldv + c0, a.ldv, ge, a.y + g0 * a.ldy + c0, a.ldy,
                                   cols - (nv - 1) * W, k0 == 0);
      }
    }
  }
  // Rows divided by their sums; rows that saw no key (never written when their tile saw none) are 0.
  for (int64_t r = 0; r < a.rows; ++r) {
    float* y = a.y + r * a.ldy;
    if (sum[r] == 0.0f) {
      std::memset(y, 0, static_cast<size_t>(a.dv) * sizeof(float));
      continue;
    }
    scale_row<V>(y, y, a.dv, V::set1(1.0f / sum[r]));
  }
}

// ---- K transposed into panels ----

template <class V>
void transpose_k(const float* k, int64_t key, int64_t dim, int64_t n, int64_t d, float* dst, int64_t ld) {
  int64_t j0 = 0;
#if defined(__AVX512F__)
  if constexpr (V::kWidth == 16) {
    if (dim == 1) {
      for (; j0 + 16 <= n; j0 += 16) {
        int64_t c0 = 0;
        for (; c0 + 16 <= d; c0 += 16) {
          __m512 r[16], t[16];
          for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(k + (j0 + i) * key + c0);
          for (int i = 0; i < 8; ++i) {
            t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
          }
          for (int i = 0; i < 4; ++i) {
            const __m512d a0 = _mm512_castps_pd(t[4 * i]), a1 = _mm512_castps_pd(t[4 * i + 1]);
            const __m512d a2 = _mm512_castps_pd(t[4 * i + 2]), a3 = _mm512_castps_pd(t[4 * i + 3]);
            r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
            r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
            r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
            r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
          }
          // r[4 i + c] holds, in 128-bit lane L, rows 4i..4i+3 of column 4 L + c.
          for (int c = 0; c < 4; ++c) {
            const __m512 u0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44);
            const __m512 u1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
            const __m512 u2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
            const __m512 u3 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
            _mm512_storeu_ps(dst + (c0 + c) * ld + j0, _mm512_shuffle_f32x4(u0, u2, 0x88));
            _mm512_storeu_ps(dst + (c0 + 4 + c) * ld + j0, _mm512_shuffle_f32x4(u0, u2, 0xDD));
            _mm512_storeu_ps(dst + (c0 + 8 + c) * ld + j0, _mm512_shuffle_f32x4(u1, u3, 0x88));
            _mm512_storeu_ps(dst + (c0 + 12 + c) * ld + j0, _mm512_shuffle_f32x4(u1, u3, 0xDD));
          }
        }
        for (; c0 < d; ++c0)
          for (int i = 0; i < 16; ++i) dst[c0 * ld + j0 + i] = k[(j0 + i) * key + c0];
      }
    }
  }
#endif
  // The rest (and every other ISA): blocks of 8 keys, reading each key's columns in order.
  for (; j0 < n; j0 += 8) {
    const int64_t jn = std::min<int64_t>(8, n - j0);
    for (int64_t c = 0; c < d; ++c)
      for (int64_t j = 0; j < jn; ++j) dst[c * ld + j0 + j] = k[(j0 + j) * key + c * dim];
  }
}

template <class V, int MR, int NS, int NP>
fused::flash::TileFns make_tile_fns() {
  fused::flash::TileFns f;
  f.mr = MR;
  f.attend = &attend<V, MR, NS, NP>;
  f.transpose_k = &transpose_k<V>;
  return f;
}

}  // namespace fusor::FUSOR_SIMD_NS
