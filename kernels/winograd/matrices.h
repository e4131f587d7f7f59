// The Winograd minimal-filtering matrices fusor uses for 3x3 convolutions, F(m x m, 3 x 3), as
// compile-time data shared by the fast kernels, the reference kernel and the tests. The rules that
// rewrite a Conv into fusor.WinogradConv (rules/all/winograd.rules) write the same G as literals,
// so the filters a model carries after optimization are G g Gᵀ for these exact matrices.
//
// One output tile of m x m from an input tile d of a x a (a = m + 2) and a 3x3 filter g:
//
//     Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A          (⊙: elementwise; a x a in the middle)
//
// F(2,3): interpolation points 0, 1, -1, ∞ (Lavin & Gray's matrices).
// F(4,3): points 0, 1, -1, 1/2, -2, ∞, chosen over Lavin's 0, ±1, ±2, ∞ because the fp32 error is
//         2-3x smaller on resnet/regnet weights (measured; docs/winograd.md). Bᵀ's rows are scaled
//         by 2 and Aᵀ's column for 1/2 by 8 (powers of two: exact), which makes Bᵀ and Aᵀ integer;
//         G carries the inverse scales.
#pragma once

namespace fusor::winograd {

template <int M>
struct Matrices;

template <>
struct Matrices<2> {
  static constexpr int m = 2, a = 4;
  static constexpr float BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr float AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};

template <>
struct Matrices<4> {
  static constexpr int m = 4, a = 6;
  static constexpr float BT[6][6] = {{2, -3, -4, 3, 2, 0}, {0, -2, 1, 5, 2, 0}, {0, 2, -5, 1, 2, 0},
                                     {0, -4, -2, 4, 2, 0}, {0, 1, -2, -1, 2, 0}, {0, 2, -3, -4, 3, 2}};
  static constexpr double G[6][3] = {{1.0 / 2, 0, 0},
                                     {1.0 / 6, 1.0 / 6, 1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {-1.0 / 15, -1.0 / 30, -1.0 / 60},
                                     {1.0 / 30, -1.0 / 15, 2.0 / 15},
                                     {0, 0, 1.0 / 2}};
  static constexpr float AT[4][6] = {{1, 1, 1, 8, 1, 0}, {0, 1, -1, 4, -2, 0}, {0, 1, 1, 2, 4, 0}, {0, 1, -1, 1, -8, 1}};
};

// Whether fusor has matrices for output tile m (2 or 4).
constexpr bool supported_tile(int m) { return m == 2 || m == 4; }

}  // namespace fusor::winograd
