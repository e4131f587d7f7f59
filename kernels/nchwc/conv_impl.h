// The tile kernels of the blocked convolution (kernels/nchwc/conv_kernels.h has the contract),
// written once over a vector type V (kernels/gemm/simd.h) and compiled per ISA. Include only from
// the per-ISA files, after simd.h.
//
// Dense tile: acc[o][r] (O blocks x R pixels, each block VB vectors) += broadcast(input lane of
// pixel r) * weights(o); the compiler keeps acc in registers (every loop below has a constant trip
// count and is fully unrolled). Depthwise tile: acc[r] += input(pixel r) * weights(tap), lane by
// lane (one vector of B channels per pixel). A last tile's non-clamp activation (TileArgs::act)
// is the GEMM epilogue's (kernels/gemm/kernel_impl.h activate), applied to the registers before
// the store: the same values as the separate pass over the stored outputs.
#pragma once
#include <cstdint>

#include "kernels/gemm/kernel_impl.h"
#include "kernels/nchwc/conv_kernels.h"

namespace fusor::FUSOR_SIMD_NS {

using nchwc_detail::Segment;
using nchwc_detail::TileArgs;
using nchwc_detail::TileRun;

// The segments of tile (oy, j) of r pixels: per kernel column its valid kernel rows' steps and
// the pixels they skip, consecutive columns with the same skips merged.
inline int build_segments(const TileRun& tr, int64_t oy, int64_t j, int64_t r, Segment* seg) {
  const int32_t kh_lo = tr.row_kh[2 * oy], kh_hi = tr.row_kh[2 * oy + 1];
  int n = 0;
  if (kh_lo == kh_hi) return n;
  const int32_t* c = tr.col_lt + j * tr.k_w * 2;
  for (int32_t kw = 0; kw < tr.k_w; ++kw) {
    const int32_t lead = c[2 * kw], trail = c[2 * kw + 1];
    if (lead + trail >= r) continue;
    const int32_t a = (kw * tr.k_h + kh_lo) * tr.lanes, b = (kw * tr.k_h + kh_hi) * tr.lanes;
    if (n > 0 && seg[n - 1].s1 == a && seg[n - 1].lead == lead && seg[n - 1].trail == trail) seg[n - 1].s1 = b;
    else seg[n++] = Segment{a, b, lead, trail};
  }
  return n;
}

// The store of a last tile (or chunk) of tile type T, whose accumulators are acc: the residual,
// then the tile activation a.act (kernels/nchwc/conv_kernels.h tile_activation) or else the clamp
// [a.lo, a.hi], in registers (T::store<kResidual>(a, acc, f) stores f of each vector).
template <class T, class V, class Acc>
inline __attribute__((always_inline)) void store_last(const TileArgs& a, Acc& acc) {
  using reg = typename V::reg;
  auto last = [&](auto f) __attribute__((always_inline)) {
    if (a.z) T::template store<true>(a, acc, f);
    else T::template store<false>(a, acc, f);
  };
  const float alpha = a.alpha, beta = a.beta;
  switch (a.act) {
#define FUSOR_CASE(K)                                                                                        \
  case Activation::K:                                                                                        \
    return last([&](reg t) __attribute__((always_inline)) { return activate<V, Activation::K>(t, alpha, beta); });
    FUSOR_CASE(SiLU) FUSOR_CASE(Sigmoid) FUSOR_CASE(HardSwish) FUSOR_CASE(HardSigmoid)
#undef FUSOR_CASE
    default: break;  // None (the driver sets only tile activations here): the clamp
  }
  const reg lo = V::set1(a.lo), hi = V::set1(a.hi);
  last([&](reg t) __attribute__((always_inline)) { return V::min(V::max(t, lo), hi); });
}

// Calls tile(args, r) for every tile of the run.
template <class Tile>
inline __attribute__((always_inline)) void for_each_tile(const TileRun& tr, Tile tile) {
  TileArgs a = tr.a;
  Segment seg[nchwc_detail::kMaxSegments];
  a.seg = seg;
  int64_t oy = tr.t0 / tr.nt, j = tr.t0 % tr.nt;
  for (int64_t t = tr.t0; t < tr.t1; ++t) {
    const int64_t r = j == tr.nt - 1 ? tr.out_w - j * tr.R : tr.R;
    a.nseg = build_segments(tr, oy, j, r, seg);
    a.x = tr.x0 + oy * tr.x_row + j * tr.x_col;
    const int64_t at = (oy * tr.out_w + j * tr.R) * tr.block;
    a.y = tr.y0 + at;
    a.z = tr.z0 ? tr.z0 + at : nullptr;
    tile(a, r);
    if (++j == tr.nt) j = 0, ++oy;
  }
}

// A tile type T's run of tiles of R pixels: T::tile on full tiles, the run's last_tile on a row's
// shorter last one.
template <class T, int R>
inline void run_tiles_of(const TileRun& tr) {
  for_each_tile(tr, [&](const TileArgs& a, int64_t r) __attribute__((always_inline)) {
    if (r == R) T::tile(a);
    else tr.last_tile(a);
  });
}

// A dense-like tile's chunk after its accumulators' start: every segment of every input block of
// the chunk through T::segment<LEAD, TRAIL, kMasked>(acc, x, w, a, sg) (unmasked forms for the
// edges most tiles have: none, one pixel left, one pixel right), then the store (store_last's on
// the last chunk, the plain partial sums otherwise). A tile type whose segments may stop inside
// a tap (T::kTailLanes) skips the padding lanes of the last input block (TileArgs::tail_lanes).
template <class T, class V, class Acc>
inline __attribute__((always_inline)) void chunk_and_store(const TileArgs& a, Acc& acc) {
  using reg = typename V::reg;
  for (int64_t ib = 0; ib < a.nib; ++ib) {
    const float* x = a.x + ib * a.x_ib_stride;
    const float* w = a.w + ib * a.w_ib_stride;
    auto one = [&](const Segment& sg) __attribute__((always_inline)) {
      if (sg.lead == 0 && sg.trail == 0) T::template segment<0, 0, false>(acc, x, w, a, sg);
      else if (sg.lead == 1 && sg.trail == 0) T::template segment<1, 0, false>(acc, x, w, a, sg);
      else if (sg.lead == 0 && sg.trail == 1) T::template segment<0, 1, false>(acc, x, w, a, sg);
      else T::template segment<0, 0, true>(acc, x, w, a, sg);
    };
    if (T::kTailLanes && a.tail_lanes && ib == a.nib - 1) {
      // The last input block's channel lanes only: each tap's first tail_lanes steps.
      for (int i = 0; i < a.nseg; ++i)
        for (int32_t s = a.seg[i].s0; s < a.seg[i].s1; s += a.tap_lanes)
          one(Segment{s, s + a.tail_lanes, a.seg[i].lead, a.seg[i].trail});
    } else {
      for (int i = 0; i < a.nseg; ++i) one(a.seg[i]);
    }
  }
  if (a.last) return store_last<T, V>(a, acc);
  T::template store<false>(a, acc, [](reg t) __attribute__((always_inline)) { return t; });
}

// acc += broadcast(*x) * w. On AVX-512, when the tile's accumulators and weights take every
// register, as one FMA with an embedded broadcast ({1to16}): the compiler would otherwise load the
// broadcast once into a 33rd register for the O FMAs that share it and spill an accumulator.
template <class V, bool kEmbedded>
inline __attribute__((always_inline)) void fma_broadcast(typename V::reg& acc, typename V::reg w, const float* x) {
#if defined(__AVX512F__)
  if constexpr (kEmbedded && V::kWidth == 16) {
    asm("vfmadd231ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*x));
    return;
  }
#endif
  acc = V::fma(V::set1(*x), w, acc);
}

// kHalfLast (two-vector blocks): the last of the O blocks has channels in its first vector only
// (out_c % B == W), so the tile neither loads its other weights nor computes it, and stores zeros
// there (padding lanes).
template <class V, int VB, int O, int R, int PS, bool kHalfLast = false>
struct DenseTile {
  using reg = typename V::reg;
  static constexpr int W = V::kWidth;
  static constexpr int B = VB * W;
  static_assert(!kHalfLast || VB == 2, "a half block is one of two vectors");
  static constexpr int K = O * VB - (kHalfLast ? 1 : 0);  // accumulator vectors per pixel
  static constexpr bool kTailLanes = true;
  // Registers: K * R accumulators, K weights, one broadcast (32 on AVX-512).
  static constexpr bool kEmbedded = W == 16 && K * R + K + 1 > 32;

  template <int LEAD, int TRAIL>
  static inline __attribute__((always_inline)) void steps(reg (&acc)[K][R], const float* x, const int32_t* off,
                                                          const float* w, int64_t w_step, int s0, int s1) {
    for (int s = s0; s < s1; ++s) {
      const float* xs = x + off[s];
      const float* ws = w + s * w_step;
      reg wv[K];
#pragma GCC unroll 16
      for (int k = 0; k < K; ++k) wv[k] = V::load(ws + k * W);
#pragma GCC unroll 32
      for (int r = LEAD; r < R - TRAIL; ++r) {
        if constexpr (kEmbedded) {
#pragma GCC unroll 16
          for (int k = 0; k < K; ++k) fma_broadcast<V, true>(acc[k][r], wv[k], xs + r * PS);
        } else {
          const reg xv = V::set1(xs[r * PS]);
#pragma GCC unroll 16
          for (int k = 0; k < K; ++k) acc[k][r] = V::fma(xv, wv[k], acc[k][r]);
        }
      }
    }
  }

  static inline __attribute__((always_inline)) void steps_masked(reg (&acc)[K][R], const float* x, const int32_t* off,
                                                                 const float* w, int64_t w_step, const Segment& sg) {
    for (int s = sg.s0; s < sg.s1; ++s) {
      const float* xs = x + off[s];
      const float* ws = w + s * w_step;
      reg wv[K];
#pragma GCC unroll 16
      for (int k = 0; k < K; ++k) wv[k] = V::load(ws + k * W);
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) {
        if (r < sg.lead || r >= R - sg.trail) continue;
        if constexpr (kEmbedded) {
#pragma GCC unroll 16
          for (int k = 0; k < K; ++k) fma_broadcast<V, true>(acc[k][r], wv[k], xs + r * PS);
        } else {
          const reg xv = V::set1(xs[r * PS]);
#pragma GCC unroll 16
          for (int k = 0; k < K; ++k) acc[k][r] = V::fma(xv, wv[k], acc[k][r]);
        }
      }
    }
  }

  // One segment's steps (chunk_and_store).
  template <int LEAD, int TRAIL, bool kMasked>
  static inline __attribute__((always_inline)) void segment(reg (&acc)[K][R], const float* x, const float* w,
                                                            const TileArgs& a, const Segment& sg) {
    if constexpr (kMasked) steps_masked(acc, x, a.off, w, a.w_step, sg);
    else steps<LEAD, TRAIL>(acc, x, a.off, w, a.w_step, sg.s0, sg.s1);
  }

  static void run(const TileArgs& a) { tile(a); }
  static void run_tiles(const TileRun& tr) { run_tiles_of<DenseTile, R>(tr); }

  // The tile's store, each vector through f, after adding the residual when kResidual (a last
  // chunk: f is the clamp or the activation, in registers). The fields are read once into locals:
  // a vector store may alias the TileArgs, so a.y would be reloaded after each.
  template <bool kResidual, class F>
  static inline __attribute__((always_inline)) void store(const TileArgs& a, reg (&acc)[K][R], F f) {
    float* const y = a.y;
    const float* const z = a.z;
    const int64_t ys = a.y_block_stride;
#pragma GCC unroll 16
    for (int k = 0; k < K; ++k) {
      const int o = k / VB, v = k % VB;
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) {
        reg t = acc[k][r];
        if constexpr (kResidual) t = V::add(t, V::load(z + o * ys + r * B + v * W));
        V::store(y + o * ys + r * B + v * W, f(t));
      }
    }
    if constexpr (kHalfLast) {
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) V::store(y + (O - 1) * ys + r * B + W, V::zero());
    }
  }
  // The accumulators' start: the bias on a first chunk, else the partial sums in Y.
  static inline __attribute__((always_inline)) void init(const TileArgs& a, reg (&acc)[K][R]) {
#pragma GCC unroll 16
    for (int k = 0; k < K; ++k) {
      const int o = k / VB, v = k % VB;
      const reg b = a.bias ? V::load(a.bias + k * W) : V::zero();
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) acc[k][r] = a.first ? b : V::load(a.y + o * a.y_block_stride + r * B + v * W);
    }
  }
  static inline __attribute__((always_inline)) void tile(const TileArgs& a) {
    reg acc[K][R];
    init(a, acc);
    chunk_and_store<DenseTile, V>(a, acc);
  }
};

// Half-block tile: a grouped conv whose groups (icg == ocg, dividing 8) never cross the middle of
// a 16-channel block, on a two-vector block (VB = 2, AVX2). Input lanes 0-7 of a block feed only
// output lanes 0-7 (the low vector), lanes 8-15 only the high one; the packed weights are the
// dense tile's block-diagonal ones (one output block: the driver calls it only when w_step = B;
// zeros off the groups), of which only the half a lane can reach is read: half the FMAs and weight loads of DenseTile<V, 2, 1, R,
// PS>, whose init and stores it shares. Every segment covers whole taps (steps of B lanes).
template <class V, int R, int PS>
struct HalfGroupTile {
  using reg = typename V::reg;
  using Dense = DenseTile<V, 2, 1, R, PS>;
  static constexpr int W = V::kWidth;
  static constexpr int B = 2 * W;
  static_assert(W == 8, "a half block is one 8-lane vector");
  static constexpr bool kTailLanes = false;  // segments of whole taps

  // One segment's taps (chunk_and_store).
  template <int LEAD, int TRAIL, bool kMasked>
  static inline __attribute__((always_inline)) void segment(reg (&acc)[2][R], const float* x, const float* w,
                                                            const TileArgs& a, const Segment& sg) {
    for (int s = sg.s0; s < sg.s1; s += B) {
      const float* xs = x + a.off[s];  // lane l of the tap at xs + l
      const float* ws = w + s * B;   // lane l's weights at ws + l * B
#pragma GCC unroll 16
      for (int l = 0; l < B; ++l) {
        const int h = l / W;  // the half lane l reaches
        const reg wv = V::load(ws + l * B + h * W);
#pragma GCC unroll 32
        for (int r = LEAD; r < R - TRAIL; ++r) {
          if (kMasked && (r < sg.lead || r >= R - sg.trail)) continue;
          acc[h][r] = V::fma(V::set1(xs[r * PS + l]), wv, acc[h][r]);
        }
      }
    }
  }

  static void run(const TileArgs& a) { tile(a); }
  static void run_tiles(const TileRun& tr) { run_tiles_of<HalfGroupTile, R>(tr); }

  template <bool kResidual, class F>
  static inline __attribute__((always_inline)) void store(const TileArgs& a, reg (&acc)[2][R], F f) {
    Dense::template store<kResidual>(a, acc, f);
  }
  static inline __attribute__((always_inline)) void tile(const TileArgs& a) {
    reg acc[2][R];
    Dense::init(a, acc);
    chunk_and_store<HalfGroupTile, V>(a, acc);
  }
};

template <class V, int VB, int R, int PS>
struct DepthwiseTile {
  using reg = typename V::reg;
  static constexpr int W = V::kWidth;
  static constexpr int B = VB * W;
  static_assert(VB == 1 || VB == 2, "a block is one or two vectors");

  template <int LEAD, int TRAIL>
  static inline __attribute__((always_inline)) void steps(reg (&acc)[VB][R], const float* x, const int32_t* off,
                                                          const float* w, int s0, int s1) {
    for (int s = s0; s < s1; ++s) {
      const float* xs = x + off[s];
      reg wv[VB];
#pragma GCC unroll 4
      for (int v = 0; v < VB; ++v) wv[v] = V::load(w + s * B + v * W);
#pragma GCC unroll 32
      for (int r = LEAD; r < R - TRAIL; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v) acc[v][r] = V::fma(V::load(xs + r * PS + v * W), wv[v], acc[v][r]);
    }
  }

  static inline __attribute__((always_inline)) void steps_masked(reg (&acc)[VB][R], const float* x, const int32_t* off,
                                                                 const float* w, const Segment& sg) {
    for (int s = sg.s0; s < sg.s1; ++s) {
      const float* xs = x + off[s];
      reg wv[VB];
#pragma GCC unroll 4
      for (int v = 0; v < VB; ++v) wv[v] = V::load(w + s * B + v * W);
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) {
        if (r < sg.lead || r >= R - sg.trail) continue;
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v) acc[v][r] = V::fma(V::load(xs + r * PS + v * W), wv[v], acc[v][r]);
      }
    }
  }

  static void run(const TileArgs& a) { tile(a); }
  static void run_tiles(const TileRun& tr) { run_tiles_of<DepthwiseTile, R>(tr); }

  // Vector HV of the block as store_last's tile view: its R accumulators' store.
  template <int HV>
  struct Vec {
    template <bool kResidual, class F>
    static inline __attribute__((always_inline)) void store(const TileArgs& a, reg (&acc)[R], F f) {
      float* const y = a.y;
      const float* const z = a.z;
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) {
        reg t = acc[r];
        if constexpr (kResidual) t = V::add(t, V::load(z + r * B + HV * W));
        V::store(y + r * B + HV * W, f(t));
      }
    }
  };

  // The row form (TileArgs::dw_kw), compiled for two-vector blocks at stride 1 with KW = 3, for
  // tiles whose taps all lie inside the image's columns. Per kernel row in [kh_lo, kh_hi): the KW
  // weights of the block's first vector in registers, then each of the R + KW - 1 input pixels
  // loaded once per vector and FMA'd into the accumulators of the pixels that read it (the second
  // vector's weights as memory operands: its KW registers would make 19 of 16). Per kernel row
  // 2 (R + KW - 1) + KW + R KW loads for 2 KW R FMAs (R 6: 37 for 36; the tap-by-tap tile's
  // 2 KW (R + 1): 42), with both vectors' 2 R accumulator chains in flight (one vector at a time,
  // 6 chains did not hide the FMA latency: 4-8% slower on mv2_dw_3x3_144, mv2_dw_3x3_576_14 and
  // effb0_dw_3x3_32_112, bench/nchwc_conv_bench).
  // At stride 2 and for 5x5 a row form measured 3-6% slower, so those keep the tap-by-tap tile.
  // Weights of tap (kh, kw) at w + (kw KH + kh) B, as the steps.
  template <int KW>
  static inline __attribute__((always_inline)) void rows_both(const TileArgs& a, int kh_lo, int kh_hi) {
    constexpr int NX = R + KW - 1;
    reg acc0[R], acc1[R];
    const reg b0 = a.bias ? V::load(a.bias) : V::zero(), b1 = a.bias ? V::load(a.bias + W) : V::zero();
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      acc0[r] = a.first ? b0 : V::load(a.y + r * B);
      acc1[r] = a.first ? b1 : V::load(a.y + r * B + W);
    }
    for (int kh = kh_lo; kh < kh_hi; ++kh) {
      const float* xr = a.x + a.off[kh];
      const float* wr = a.w + kh * B;
      const int64_t ws = a.dw_kh * B;
      reg wv[KW];
#pragma GCC unroll 8
      for (int kw = 0; kw < KW; ++kw) wv[kw] = V::load(wr + kw * ws);
#pragma GCC unroll 64
      for (int ix = 0; ix < NX; ++ix) {
        const reg x0 = V::load(xr + ix * B);
#pragma GCC unroll 8
        for (int kw = 0; kw < KW; ++kw)
          if (ix - kw >= 0 && ix - kw < R) acc0[ix - kw] = V::fma(x0, wv[kw], acc0[ix - kw]);
        const reg x1 = V::load(xr + ix * B + W);
#pragma GCC unroll 8
        for (int kw = 0; kw < KW; ++kw)
          if (ix - kw >= 0 && ix - kw < R) acc1[ix - kw] = V::fma(x1, V::load(wr + kw * ws + W), acc1[ix - kw]);
      }
    }
    if (a.last) {
      store_last<Vec<0>, V>(a, acc0);
      return store_last<Vec<1>, V>(a, acc1);
    }
    Vec<0>::template store<false>(a, acc0, [](reg t) __attribute__((always_inline)) { return t; });
    Vec<1>::template store<false>(a, acc1, [](reg t) __attribute__((always_inline)) { return t; });
  }
  // Runs tile a in the row form when it is one for it (no lead or trail, every kernel column
  // present with the same rows: one merged segment of all taps, or KW of kernel rows [lo, hi)).
  template <int KW>
  static inline __attribute__((always_inline)) bool try_rows(const TileArgs& a) {
    for (int i = 0; i < a.nseg; ++i)
      if (a.seg[i].lead != 0 || a.seg[i].trail != 0) return false;
    int kh_lo = 0, kh_hi = 0;
    if (a.nseg == 1 && a.seg[0].s0 == 0 && a.seg[0].s1 == KW * a.dw_kh) kh_hi = a.dw_kh;
    else if (a.nseg == KW) kh_lo = a.seg[0].s0, kh_hi = a.seg[0].s1;
    else return false;
    rows_both<KW>(a, kh_lo, kh_hi);
    return true;
  }

  // As DenseTile's (one block of output channels).
  template <bool kResidual, class F>
  static inline __attribute__((always_inline)) void store(const TileArgs& a, reg (&acc)[VB][R], F f) {
    Vec<0>::template store<kResidual>(a, acc[0], f);
    if constexpr (VB == 2) Vec<1>::template store<kResidual>(a, acc[1], f);
  }
  static inline __attribute__((always_inline)) void tile(const TileArgs& a) {
    if constexpr (VB == 2 && PS == B) {
      if (a.dw_kw == 3 && try_rows<3>(a)) return;
    }
    reg acc[VB][R];
#pragma GCC unroll 4
    for (int v = 0; v < VB; ++v) {
      const reg init = a.bias ? V::load(a.bias + v * W) : V::zero();
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) acc[v][r] = a.first ? init : V::load(a.y + r * B + v * W);
    }
    for (int i = 0; i < a.nseg; ++i) {
      const Segment& sg = a.seg[i];
      if (sg.lead == 0 && sg.trail == 0) steps<0, 0>(acc, a.x, a.off, a.w, sg.s0, sg.s1);
      else if (sg.lead == 1 && sg.trail == 0) steps<1, 0>(acc, a.x, a.off, a.w, sg.s0, sg.s1);
      else if (sg.lead == 0 && sg.trail == 1) steps<0, 1>(acc, a.x, a.off, a.w, sg.s0, sg.s1);
      else steps_masked(acc, a.x, a.off, a.w, sg);
    }
    if (a.last) return store_last<DepthwiseTile, V>(a, acc);
    store<false>(a, acc, [](reg t) __attribute__((always_inline)) { return t; });
  }
};

}  // namespace fusor::FUSOR_SIMD_NS
