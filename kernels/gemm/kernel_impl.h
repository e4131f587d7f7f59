// The register-blocked microkernel, the macro kernel over a cache block, and the vectorized
// epilogue, written once over a vector type V (kernels/gemm/simd.h) and compiled per ISA.
// Include only from the per-ISA files, after simd.h. Uses nothing from std:: beyond <cmath> in the
// scalar type, so no inline library code gets compiled with wide-ISA flags (see simd.h).
#pragma once
#include <utility>

#include "kernels/epilogue.h"
#include "kernels/gemm/gemm_kernels.h"

namespace fusor::FUSOR_SIMD_NS {

using gemm_detail::MacroArgs;

template <class V, Activation K>
inline typename V::reg activate(typename V::reg x, float alpha, float beta) {
  using reg = typename V::reg;
  if constexpr (K == Activation::None) {
    return x;
  } else if constexpr (K == Activation::Relu) {
    return V::max(x, V::zero());
  } else if constexpr (K == Activation::Clip) {
    return V::min(V::max(x, V::set1(alpha)), V::set1(beta));
  } else if constexpr (K == Activation::LeakyRelu) {
    return V::lt_select(x, V::zero(), V::mul(x, V::set1(alpha)), x);
  } else if constexpr (K == Activation::Sigmoid) {
    return V::div_pos(V::set1(1.0f), V::add(V::set1(1.0f), V::exp(V::mul(x, V::set1(-1.0f)))));
  } else if constexpr (K == Activation::SiLU) {
    return V::div_pos(x, V::add(V::set1(1.0f), V::exp(V::mul(x, V::set1(-1.0f)))));
  } else if constexpr (K == Activation::Tanh) {
    // sign(x) (1 - e) / (1 + e), e = exp(-2|x|); an odd polynomial near 0 where 1 - e cancels.
    reg ax = V::abs(x);
    reg e = V::exp(V::mul(ax, V::set1(-2.0f)));
    reg big = V::copysign(V::div_pos(V::sub1(e), V::add(V::set1(1.0f), e)), x);
    reg x2 = V::mul(x, x);
    reg p = V::fma(x2, V::set1(-17.0f / 315), V::set1(2.0f / 15));
    p = V::fma(p, x2, V::set1(-1.0f / 3));
    p = V::fma(p, x2, V::set1(1.0f));
    reg small = V::mul(p, x);
    return V::lt_select(ax, V::set1(0.0625f), small, big);
  } else if constexpr (K == Activation::HardSigmoid) {
    return V::min(V::set1(1.0f), V::max(V::zero(), V::fma(x, V::set1(alpha), V::set1(beta))));  // NaN stays NaN
  } else if constexpr (K == Activation::HardSwish) {
    reg g = V::min(V::max(V::fma(x, V::set1(1.0f / 6), V::set1(0.5f)), V::zero()), V::set1(1.0f));
    return V::mul(x, g);
  } else if constexpr (K == Activation::GeluTanh) {
    // 0.5 x (1 + tanh(z)) = x sigmoid(2 z), z = sqrt(2/pi) (x + 0.044715 x^3).
    reg x2 = V::mul(x, x);
    reg z2 = V::mul(x, V::fma(x2, V::set1(-2.0f * 0.7978845608028654f * 0.044715f), V::set1(-2.0f * 0.7978845608028654f)));
    return V::div_pos(x, V::add(V::set1(1.0f), V::exp(z2)));
  } else {
    static_assert(K == Activation::Gelu);
    // 0.5 x (1 + erf(z)), z = x / sqrt(2), erf(z) = z P(z^2) / Q(z^2): P of degree 6 and Q of
    // degree 4 fitted for this kernel (minimax by iterated reweighted least squares: 1.1e-7 in
    // exact arithmetic). Written in s = x^2 with 1/sqrt(2), 1/2 and the powers of 2 folded into
    // the coefficients: h = 0.5 erf(z) = x P'(s) / Q'(s) clamped to [-1/2, 1/2], y = (1/2 + h) x.
    // Past |z| = 3.86 the fit stays within 6.3e-8 below 1 and above, so the clamp gives erf's
    // float value there (no select); x enters the fit clamped to [-8, 8] (erf is 1 in float from
    // |z| = 3.9), so nothing overflows where the division is a true one (AVX2, scalar). One
    // division and 11 multiply-adds, 23 operations (28 with z and t formed and the ends
    // selected): within 1.3e-6 of exact GELU, 2.2e-7 (1 + |x|), as before (float evaluation of
    // both forms over [-12, 12]). NaN stays NaN (max / min return their second operand, the NaN).
    const reg xc = V::min(V::set1(8.0f), V::max(V::set1(-8.0f), x));
    const reg xs = V::mul(xc, xc);
    reg p = V::fma(V::set1(1.1127086058104751e-10f), xs, V::set1(-2.171557866859075e-08f));
    p = V::fma(p, xs, V::set1(3.1061392746778438e-06f));
    p = V::fma(p, xs, V::set1(0.00015976178110577166f));
    p = V::fma(p, xs, V::set1(0.004440962802618742f));
    p = V::fma(p, xs, V::set1(0.034938883036375046f));
    p = V::fma(p, xs, V::set1(0.3989422619342804f));
    reg q = V::fma(V::set1(5.864022750756703e-05f), xs, V::set1(0.0017694109119474888f));
    q = V::fma(q, xs, V::set1(0.028508532792329788f));
    q = V::fma(q, xs, V::set1(0.2542443573474884f));
    q = V::fma(q, xs, V::set1(1.0f));
    const reg h = V::min(V::set1(0.5f), V::max(V::set1(-0.5f), V::div_pos(V::mul(xc, p), q)));
    return V::mul(V::add(V::set1(0.5f), h), x);
  }
}

// The activations the register tile applies to its accumulators before storing them; macro()
// runs the others as a pass over each stored row panel. GELU (the transformers' MLP) is one on
// AVX-512: as a pass it read the panel back from L2 (B's panels stream through L1 in between)
// beside B's own stream (vit_tiny's MLP-up products relative to the rest of the model, 12
// alternated rounds: -3.5% median, -6.5% min; bert_like -1.5%).
template <class V>
constexpr bool in_tile(Activation k) {
  return k == Activation::None || k == Activation::Relu || k == Activation::Clip ||
         (k == Activation::Gelu && V::kWidth == 16);
}

// rows x cols in place: c = act(c) (first_pass false) or act(scale c + bias + residual).
template <class V, Activation K, bool kFull>
void epilogue_rows(float* c, int64_t ldc, int64_t rows, int64_t cols, const Epilogue& ep) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  const bool scale = kFull && ep.scale != 1.0f;
  const float* bias = kFull && ep.bias && ep.bias_axis != BiasAxis::None ? ep.bias : nullptr;
  const bool row_bias = bias && ep.bias_axis == BiasAxis::PerRow;
  const float* res = kFull ? ep.residual : nullptr;
  const float alpha = ep.act.alpha, beta = ep.act.beta;
  for (int64_t i = 0; i < rows; ++i) {
    float* p = c + i * ldc;
    const float* rrow = res ? res + i * ep.residual_ld : nullptr;
    const reg rb = row_bias ? V::set1(bias[i]) : V::zero();
    int64_t j = 0;
    auto one = [&](reg v, int n) {
      if (scale) v = V::mul(v, V::set1(ep.scale));
      if (bias) v = V::add(v, row_bias ? rb : (n == W ? V::load(bias + j) : V::load_n(bias + j, n)));
      if (rrow) v = V::add(v, n == W ? V::load(rrow + j) : V::load_n(rrow + j, n));
      return activate<V, K>(v, alpha, beta);
    };
    for (; j + W <= cols; j += W) V::store(p + j, one(V::load(p + j), W));
    if (j < cols) {
      const int n = static_cast<int>(cols - j);
      V::store_n(p + j, one(V::load_n(p + j, n), n), n);
    }
  }
}

template <class V, bool kFull>
void epilogue_dispatch(float* c, int64_t ldc, int64_t rows, int64_t cols, const Epilogue& ep) {
  switch (ep.act.kind) {
#define FUSOR_CASE(K) \
  case Activation::K: return epilogue_rows<V, Activation::K, kFull>(c, ldc, rows, cols, ep);
    FUSOR_CASE(None) FUSOR_CASE(Relu) FUSOR_CASE(Clip) FUSOR_CASE(LeakyRelu) FUSOR_CASE(Sigmoid)
    FUSOR_CASE(Tanh) FUSOR_CASE(HardSigmoid) FUSOR_CASE(HardSwish) FUSOR_CASE(SiLU) FUSOR_CASE(Gelu)
    FUSOR_CASE(GeluTanh)
#undef FUSOR_CASE
  }
}

template <class V>
void apply_epilogue(float* c, int64_t ldc, int64_t rows, int64_t cols, const Epilogue& ep) {
  epilogue_dispatch<V, true>(c, ldc, rows, cols, ep);
}

using TileFn = void (*)(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, int nr,
                        bool accumulate, const Epilogue* ep, const float* pf, int64_t pf_lines);

// C[MR x nr] (+)= A panel (kc x MRP, first MR rows used) * B panel (kc x NV*W), then the epilogue.
// kDirect: A is MR rows of a row-major matrix (row i at a + i * lda) instead of a packed panel;
// the same products are summed in the same order, so the results are the packed path's.
// pf: pf_lines consecutive 64-byte lines to prefetch into L2, spread evenly over the k steps.
template <class V, int MRP, int MR, int NV, bool kDirect>
void tile(int64_t kc, const float* __restrict a, int64_t lda, const float* __restrict b, float* c, int64_t ldc, int nr,
          bool accumulate, const Epilogue* ep, const float* pf, int64_t pf_lines) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth, NR = NV * W;
  reg acc[MR][NV];
#pragma GCC unroll 64
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
  // B's panels stream from L2, and on their first use in a call (a model's weights) from L3 or
  // memory, where the hardware prefetcher restarts at every page: prefetch the lines kPrefetch
  // k steps ahead (3 KiB on the 14x32 tile; past the panel's end it reads lines of the next one
  // or of a later k block, harmless). bench/gemm_bench, min of 3: 49 x 3072 x 768 2528 -> 2160 us,
  // 49 x 768 x 3072 2480 -> 2140, BM_FusorColdB 128 x 1536 x 384 1580 -> 1509; fusor bench
  // --level all min ms: bert_like_s128 20.9 -> 19.7 (1 thread), vit_tiny 15.6 -> 14.9 (2).
  constexpr int64_t kPrefetch = 24;
  // One line of pf every pf_step k steps: the same lines as a burst before each tile made even
  // warm B slower (bench/gemm_bench min of 3, 128 x 1536 x 384: 1468 -> 1539 us; the burst holds
  // the miss buffers the tile's own B stream needs), spread they pay (macro() below).
  const int64_t pf_step = pf_lines > 0 ? (kc > pf_lines ? kc / pf_lines : 1) : kc + 1;
  const float* const pf_end = pf + pf_lines * 16;
  int64_t pf_k = 0;
  for (int64_t k = 0; k < kc; ++k) {
    if (k == pf_k) {
      if (pf < pf_end) __builtin_prefetch(pf, 0, 2);
      pf += 16;
      pf_k += pf_step;
    }
    reg bv[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j)
      if (j * W % 16 == 0) __builtin_prefetch(b + kPrefetch * NR + j * W, 0, 3);  // one per 64-byte line
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) bv[j] = V::load(b + j * W);
#pragma GCC unroll 64
    for (int i = 0; i < MR; ++i) {
      const reg av = V::set1(kDirect ? a[i * lda] : a[i]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
    }
    a += kDirect ? 1 : MRP;
    b += NR;
  }
  for (; pf < pf_end; pf += 16) __builtin_prefetch(pf, 0, 2);  // more lines than k steps
  bool clamp = false, gelu = false;
  float lo = 0, hi = 0;
  const float* bias = nullptr;
  bool row_bias = false;
  if (ep) {
    const Activation k = ep->act.kind;
    clamp = k == Activation::Relu || k == Activation::Clip;
    gelu = k == Activation::Gelu && in_tile<V>(k);
    lo = k == Activation::Relu ? 0.0f : ep->act.alpha;
    hi = k == Activation::Relu ? __builtin_inff() : ep->act.beta;
    if (ep->bias && ep->bias_axis != BiasAxis::None) {
      bias = ep->bias;
      row_bias = ep->bias_axis == BiasAxis::PerRow;
    }
  }
#pragma GCC unroll 64
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      const int n = nr - j * W;
      if (n <= 0) break;
      float* p = c + i * ldc + j * W;
      reg v = acc[i][j];
      if (accumulate) v = V::add(v, n >= W ? V::load(p) : V::load_n(p, n));
      if (ep) {
        if (ep->scale != 1.0f) v = V::mul(v, V::set1(ep->scale));
        if (bias) v = V::add(v, row_bias ? V::set1(bias[i]) : n >= W ? V::load(bias + j * W) : V::load_n(bias + j * W, n));
        if (ep->residual) {
          const float* r = ep->residual + i * ep->residual_ld + j * W;
          v = V::add(v, n >= W ? V::load(r) : V::load_n(r, n));
        }
        if (clamp) v = V::min(V::max(v, V::set1(lo)), V::set1(hi));
        if (gelu) v = activate<V, Activation::Gelu>(v, 0.0f, 0.0f);
      }
      if (n >= W) V::store(p, v); else V::store_n(p, v, n);
    }
  }
  // The activations not in_tile run over the whole row panel in macro(), once its tiles are stored.
}

template <class V, int MRP, int NV, bool kDirect, class Seq>
struct TileTable;
template <class V, int MRP, int NV, bool kDirect, int... I>
struct TileTable<V, MRP, NV, kDirect, std::integer_sequence<int, I...>> {
  static constexpr TileFn fns[sizeof...(I)] = {&tile<V, MRP, I + 1, NV, kDirect>...};
};

// Loops over the register tiles of one cache block: A panels outer (one stays in L1), B panels
// inner (the kc x nc block streams from L2).
template <class V, int MRP, int NV>
void macro(const MacroArgs& m) {
  constexpr int NR = NV * V::kWidth;
  using Packed = TileTable<V, MRP, NV, false, std::make_integer_sequence<int, MRP>>;
  using Direct = TileTable<V, MRP, NV, true, std::make_integer_sequence<int, MRP>>;
  Epilogue e;
  if (m.ep) e = *m.ep;
  const Activation act = m.ep ? m.ep->act.kind : Activation::None;
  const bool act_pass = !in_tile<V>(act);
  // The next block's B (m.pf): its lines in equal shares before each tile, line q at panel
  // q / per_panel. The tile's own prefetch fetches only the block it computes, while its first row
  // of tiles runs, so a block from memory streams at one row tile's pace (the other tiles read it
  // from L2). prefetcht1 (L2 on Zen 4). bench/gemm_bench, median of 3 alternated, before -> after:
  // BM_FusorColdB 128 x 1152 x 384 1202 -> 1147 us, 128 x 1536 x 384 1596 -> 1543, warm B (from
  // L3: 2.4 MB) 128 x 384 x 1536 1616 -> 1480.
  const int64_t per_panel = m.pf_panel_floats / 16;
  const int64_t pf_lines = m.pf && per_panel > 0 ? m.pf_panels * per_panel : 0;
  const int64_t tiles = (m.mc + MRP - 1) / MRP * ((m.nc + NR - 1) / NR);
  int64_t q = 0, t = 0;
  for (int64_t ir = 0; ir < m.mc; ir += MRP) {
    const int mr = m.mc - ir < MRP ? static_cast<int>(m.mc - ir) : MRP;
    const TileFn fn = m.a_ld > 0 ? Direct::fns[mr - 1] : Packed::fns[mr - 1];
    const float* a = m.a_ld > 0 ? m.a + ir * m.a_ld : m.a + (ir / MRP) * m.a_panel_stride;
    for (int64_t jr = 0; jr < m.nc; jr += NR) {
      const int nr = m.nc - jr < NR ? static_cast<int>(m.nc - jr) : NR;
      // The tile's epilogue: e is copied from m.ep once, only its two pointers set per tile (a
      // whole-struct copy per tile made the tile's first reads of it wait on store forwarding
      // from wide overlapping stores: 2% of vit_tiny's time in this loop, mostly that wait).
      const Epilogue* ep = nullptr;
      if (m.ep) {
        const Epilogue& src = *m.ep;
        if (src.bias)
          e.bias = src.bias + (src.bias_axis == BiasAxis::PerRow ? ir : src.bias_axis == BiasAxis::PerColumn ? jr : 0);
        if (src.residual) e.residual = src.residual + ir * src.residual_ld + jr;
        ep = &e;
      }
      // This tile's share, cut at the end of a panel (the rest goes to the next tiles).
      const float* pf = nullptr;
      int64_t q1 = q;
      if (pf_lines) {
        const int64_t share_end = ++t * pf_lines / tiles, panel_end = (q / per_panel + 1) * per_panel;
        q1 = share_end < panel_end ? share_end : panel_end;
        pf = m.pf + q / per_panel * m.pf_panel_stride + q % per_panel * 16;
      }
      fn(m.kc, a, m.a_ld, m.b + (jr / NR) * m.b_panel_stride, m.c + ir * m.ldc + jr, m.ldc, nr, m.accumulate, ep, pf,
         q1 - q);
      q = q1;
    }
    // The non-clamp activations (exp, erf...) run over a stored mr x nc row panel, one panel
    // behind: reading back a tile right after its 512-bit stores stalls on store forwarding
    // (Zen 4 splits them), while the previous panel is committed and still in L1/L2.
    if (act_pass) {
      if (ir > 0) epilogue_dispatch<V, false>(m.c + (ir - MRP) * m.ldc, m.ldc, MRP, m.nc, *m.ep);
      if (ir + MRP >= m.mc) epilogue_dispatch<V, false>(m.c + ir * m.ldc, m.ldc, mr, m.nc, *m.ep);
    }
  }
}

}  // namespace fusor::FUSOR_SIMD_NS
