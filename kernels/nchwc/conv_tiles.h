// Internal: the table of compiled dense tiles of one ISA, built from conv_impl.h's DenseTile for
// every (O, R) within the register budget (O * R * VB accumulator vectors <= kAccVectors) and
// every pixel stride the driver uses, its depthwise tiles and, on two-vector blocks (AVX2), its
// half-block tiles (HalfGroupTile) and half-last dense tiles (DenseTile kHalfLast). Include only from the per-ISA files, after conv_impl.h.
#pragma once
#include <utility>

#include "kernels/nchwc/conv_impl.h"

namespace fusor::FUSOR_SIMD_NS {

// Pixel strides (floats) with a compiled tile: blocked B = 16 at stride 1 and 2, NCHW input at
// stride 1, 2 and 4.
inline constexpr int kPixelStrides[] = {16, 32, 1, 2, 4};
inline constexpr int kNumPixelStrides = 5;

inline int pixel_stride_index(int ps) {
  for (int i = 0; i < kNumPixelStrides; ++i)
    if (kPixelStrides[i] == ps) return i;
  return -1;
}

template <class V, int VB, int kAccVectors>
struct ConvTileTable {
  static constexpr int kDwMaxR = kAccVectors / VB < nchwc_detail::kMaxR ? kAccVectors / VB : nchwc_detail::kMaxR;
  nchwc_detail::TileFn fn[kNumPixelStrides][nchwc_detail::kMaxO + 1][nchwc_detail::kMaxR + 1] = {};
  nchwc_detail::RunFn run[kNumPixelStrides][nchwc_detail::kMaxO + 1][nchwc_detail::kMaxR + 1] = {};
  nchwc_detail::TileFn dw[2][nchwc_detail::kMaxR + 1] = {};  // pixel strides 16 and 32
  nchwc_detail::RunFn dw_run[2][nchwc_detail::kMaxR + 1] = {};
  // Half-block tiles (HalfGroupTile), pixel strides 16 and 32: two-vector blocks of 8 lanes only
  // (AVX2), R up to kHalfMaxR (2 R accumulators, a weight vector and a broadcast in 16 registers).
  static constexpr bool kHalf = VB == 2 && V::kWidth == 8;
  static constexpr int kHalfMaxR = kHalf ? 7 : 0;
  nchwc_detail::TileFn half[2][nchwc_detail::kMaxR + 1] = {};
  nchwc_detail::RunFn half_run[2][nchwc_detail::kMaxR + 1] = {};
  template <int P, int... Rs>
  constexpr void fill_half(std::integer_sequence<int, Rs...>) {
    ((half[P][Rs + 1] = &HalfGroupTile<V, Rs + 1, kPixelStrides[P]>::run), ...);
    ((half_run[P][Rs + 1] = &HalfGroupTile<V, Rs + 1, kPixelStrides[P]>::run_tiles), ...);
  }

  // Half-last dense tiles (DenseTile kHalfLast), pixel strides 16 and 32, two-vector blocks only:
  // (2 O - 1) R accumulator vectors <= kAccVectors.
  nchwc_detail::TileFn half_last[2][nchwc_detail::kMaxO + 1][nchwc_detail::kMaxR + 1] = {};
  nchwc_detail::RunFn half_last_run[2][nchwc_detail::kMaxO + 1][nchwc_detail::kMaxR + 1] = {};
  template <int P, int O, int... Rs>
  constexpr void fill_half_last_r(std::integer_sequence<int, Rs...>) {
    ((half_last[P][O][Rs + 1] = one_half_last<P, O, Rs + 1>()), ...);
    ((half_last_run[P][O][Rs + 1] = one_half_last_run<P, O, Rs + 1>()), ...);
  }
  template <int P, int... Os>
  constexpr void fill_half_last(std::integer_sequence<int, Os...>) {
    (fill_half_last_r<P, Os + 1>(std::make_integer_sequence<int, nchwc_detail::kMaxR>{}), ...);
  }
  template <int P, int O, int R>
  static constexpr nchwc_detail::TileFn one_half_last() {
    if constexpr ((2 * O - 1) * R <= kAccVectors) return &DenseTile<V, 2, O, R, kPixelStrides[P], true>::run;
    else return nullptr;
  }
  template <int P, int O, int R>
  static constexpr nchwc_detail::RunFn one_half_last_run() {
    if constexpr ((2 * O - 1) * R <= kAccVectors) return &DenseTile<V, 2, O, R, kPixelStrides[P], true>::run_tiles;
    else return nullptr;
  }

  template <int P, int R>
  static constexpr nchwc_detail::TileFn one_dw() {
    if constexpr (R <= kDwMaxR) return &DepthwiseTile<V, VB, R, kPixelStrides[P]>::run;
    else return nullptr;
  }
  template <int P, int R>
  static constexpr nchwc_detail::RunFn one_dw_run() {
    if constexpr (R <= kDwMaxR) return &DepthwiseTile<V, VB, R, kPixelStrides[P]>::run_tiles;
    else return nullptr;
  }
  template <int P, int... Rs>
  constexpr void fill_dw(std::integer_sequence<int, Rs...>) {
    ((dw[P][Rs + 1] = one_dw<P, Rs + 1>()), ...);
    ((dw_run[P][Rs + 1] = one_dw_run<P, Rs + 1>()), ...);
  }

  template <int P, int O, int R>
  static constexpr nchwc_detail::TileFn one() {
    if constexpr (O * R * VB <= kAccVectors) return &DenseTile<V, VB, O, R, kPixelStrides[P]>::run;
    else return nullptr;
  }
  template <int P, int O, int R>
  static constexpr nchwc_detail::RunFn one_run() {
    if constexpr (O * R * VB <= kAccVectors) return &DenseTile<V, VB, O, R, kPixelStrides[P]>::run_tiles;
    else return nullptr;
  }
  template <int P, int O, int... Rs>
  constexpr void fill_r(std::integer_sequence<int, Rs...>) {
    ((fn[P][O][Rs + 1] = one<P, O, Rs + 1>()), ...);
    ((run[P][O][Rs + 1] = one_run<P, O, Rs + 1>()), ...);
  }
  template <int P, int... Os>
  constexpr void fill_o(std::integer_sequence<int, Os...>) {
    (fill_r<P, Os + 1>(std::make_integer_sequence<int, nchwc_detail::kMaxR>{}), ...);
  }
  template <int... Ps>
  constexpr void fill_p(std::integer_sequence<int, Ps...>) {
    (fill_o<Ps>(std::make_integer_sequence<int, nchwc_detail::kMaxO>{}), ...);
  }
  constexpr ConvTileTable() {
    fill_p(std::make_integer_sequence<int, kNumPixelStrides>{});
    fill_dw<0>(std::make_integer_sequence<int, nchwc_detail::kMaxR>{});
    fill_dw<1>(std::make_integer_sequence<int, nchwc_detail::kMaxR>{});
    if constexpr (kHalf) {
      fill_half<0>(std::make_integer_sequence<int, kHalfMaxR>{});
      fill_half<1>(std::make_integer_sequence<int, kHalfMaxR>{});
      fill_half_last<0>(std::make_integer_sequence<int, nchwc_detail::kMaxO>{});
      fill_half_last<1>(std::make_integer_sequence<int, nchwc_detail::kMaxO>{});
    }
  }

  nchwc_detail::TileFn find(int o, int r, int ps) const {
    const int p = pixel_stride_index(ps);
    if (p < 0 || o < 1 || o > nchwc_detail::kMaxO || r < 1 || r > nchwc_detail::kMaxR) return nullptr;
    return fn[p][o][r];
  }
  nchwc_detail::RunFn find_run(int o, int r, int ps) const {
    const int p = pixel_stride_index(ps);
    if (p < 0 || o < 1 || o > nchwc_detail::kMaxO || r < 1 || r > nchwc_detail::kMaxR) return nullptr;
    return run[p][o][r];
  }
  nchwc_detail::RunFn find_dw_run(int r, int ps) const {
    const int p = pixel_stride_index(ps);
    if (p < 0 || p > 1 || r < 1 || r > nchwc_detail::kMaxR) return nullptr;
    return dw_run[p][r];
  }
  nchwc_detail::TileFn find_half(int r, int ps) const {
    const int p = pixel_stride_index(ps);
    if (p < 0 || p > 1 || r < 1 || r > kHalfMaxR) return nullptr;
    return half[p][r];
  }
  nchwc_detail::RunFn find_half_run(int r, int ps) const {
    const int p = pixel_stride_index(ps);
    if (p < 0 || p > 1 || r < 1 || r > kHalfMaxR) return nullptr;
    return half_run[p][r];
  }
  nchwc_detail::TileFn find_half_last(int o, int r, int ps) const {
    const int p = pixel_stride_index(ps);
    if (!kHalf || p < 0 || p > 1 || o < 1 || o > nchwc_detail::kMaxO || r < 1 || r > nchwc_detail::kMaxR) return nullptr;
    return half_last[p][o][r];
  }
  nchwc_detail::RunFn find_half_last_run(int o, int r, int ps) const {
    const int p = pixel_stride_index(ps);
    if (!kHalf || p < 0 || p > 1 || o < 1 || o > nchwc_detail::kMaxO || r < 1 || r > nchwc_detail::kMaxR) return nullptr;
    return half_last_run[p][o][r];
  }
  nchwc_detail::TileFn find_dw(int r, int ps) const {
    const int p = pixel_stride_index(ps);
    if (p < 0 || p > 1 || r < 1 || r > nchwc_detail::kMaxR) return nullptr;
    return dw[p][r];
  }
};

}  // namespace fusor::FUSOR_SIMD_NS
