// Winograd F(2x2, 3x3) and F(4x4, 3x3) for int8 convolutions (3x3, stride 1, dilation 1, one
// group) on NHWC 8-bit data, in exact integer arithmetic: the AVX2 path of kernels/int8/qconv.h
// for such convs.
//
// F(2x2, 3x3): why it is exact. With d the input tile less X's zero point (|d| <= 255) and g the
// filter less its zero point (|g| <= 255), F(2,3)'s matrices give Y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A,
// where Bᵀ and Aᵀ hold 0 and ±1 and G halves. With G' = 2G (integer), U = G' g G'ᵀ is an integer
// matrix with |U| <= 9 * 255 and V = Bᵀ d B one with |V| <= 4 * 255, both int16; Aᵀ[U ⊙ V]A = 4Y
// exactly. The products are summed over input channels with vpmaddwd (two int16 products per
// int32 lane: at most 2 * 2295 * 1020, far from overflowing) and vpaddd, then transformed by
// additions; all of it is exact modulo 2^32, so the result is 4Y exactly whenever 4Y fits int32,
// which the constructor checks per output channel (4 * 255 * sum |g| < 2^31: any channel count a
// CNN has). Y = 4Y >> 2.
//
// F(4x4, 3x3) (points 0, ±1, ±2, ∞): Bᵀ is integer with rows of absolute sum at most 10, so
// |V| <= 100 * 255 = 25500 (int16). G's rows have denominators 4, 6, 6, 24, 24, 1: scaled by them
// (D G = [1 0 0; -1 -1 -1; -1 1 -1; 1 2 4; 1 -2 4; 0 0 1]), U = (DG) g (DG)ᵀ is integer with
// |U| <= 49 * 255 (int16), and Y = Aᵀ[D⁻¹(U ⊙ V)D⁻¹]A, so with E = 24 Aᵀ D⁻¹ (integer),
// E (U ⊙ V) Eᵀ = 576 Y. The sums of U ⊙ V over channels can pass int32, but everything is
// computed modulo 2^32: 576 Y mod 2^32 = 64 (9Y mod 2^26), and 9 is invertible modulo 2^26, so
// Y mod 2^26 follows, which is Y whenever |Y| < 2^25. The constructor checks that per output
// channel (255 * sum |g| < 2^25); a pair of products stays under 2 * 25500 * 12495 < 2^31.
// Outputs are the direct path's to the bit in both forms: the requantization is the GEMM's
// (QEpilogue) on the same int32 sums.
//
// Why it pays (AVX2 without VNNI). The direct int8 kernels multiply with two vpmaddubsw/vpmaddwd
// per 32 products; here one vpmaddwd does 16 products of the transformed domain, which has 16
// products per 2x2 outputs per channel pair where the direct form has 36 (F(4,3): 36 per 4x4,
// against 144), less the transforms' additions (docs/quantization.md has the measured figures).
// F(4,3)'s U is 36/16 of F(2,3)'s (8x the int8 weights), so it is taken where U stays small
// (in_c * out_c <= 128 * 128) and its bound holds; F(2,3) otherwise.
//
// The work: every tile's (m+2)x(m+2) input window is transformed once per call into V (tile-major,
// the tile's positions, channels padded to 16); then tasks of (a group of tiles, a range of
// 16-channel output panels) multiply, panel by panel and position by position, the group's
// tiles by that position's part of U's panel (16 KB at most, in L1 meanwhile) on a 6-tile x
// 16-channel register tile, keep the positions' results in a buffer, transform them back and
// store them through the epilogue. U passes once per group; groups are as large as L2 allows for
// their V and the buffer for its results (deep layers have few tiles: one group there).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "kernels/conv/conv.h"
#include "kernels/int8/qgemm.h"

namespace fusor {

class ThreadPool;

namespace int8 {

// One call's tiling (NHWC): tiles of m x m outputs, their inputs from (m ty - pad_t, m tx - pad_l).
struct QWinoGeometry {
  int m = 2;  // output tile: 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3)); windows of m + 2
  int64_t batch = 1, in_c = 0, in_h = 0, in_w = 0, out_c = 0, out_h = 0, out_w = 0, pad_t = 0, pad_l = 0;
  int64_t tiles_h = 0, tiles_w = 0;
  int64_t cs = 0;      // int16 per position of a tile in V: in_c rounded up to 16
  int64_t kpairs = 0;  // pairs of input channels multiplied: ceil(in_c / 2)
  int64_t tiles() const { return batch * tiles_h * tiles_w; }
  int64_t positions() const { return (m + 2) * (m + 2); }
};

class QWinograd {
 public:
  QWinograd() = default;
  // g: the filters less their zero points (-255 .. 255), out_c x in_c x 3 x 3.
  // tile: 4 or 2 (that form, if its bound holds), 0 (F(4,3) where it pays and holds, else F(2,3)).
  // Empty when no form's bound holds (see above).
  QWinograd(int64_t out_c, int64_t in_c, const int16_t* g, int tile = 0);

  bool empty() const { return !u_; }
  int tile() const { return m_; }

  // y (NHWC, ep.out) = ep(S) for s (3x3, stride 1, dilation 1, one group, in_c/out_c as built),
  // S[pixel][oc] = sum over the window of ((x ^ flip) - x_zero) * g, pads contributing nothing.
  // ep: col_offset holds what S lacks (the bias), no row sums; its residual rows are pixels.
  void run(const Conv2dShape& s, const uint8_t* x, uint8_t flip, int32_t x_zero, const QEpilogue& ep, void* y,
           ThreadPool* pool, const std::function<void*(size_t)>& scratch) const;

 private:
  std::shared_ptr<int16_t[]> u_;  // [panel][position][kpairs][16 channels][2]
  int m_ = 2;
  int64_t out_c_ = 0, in_c_ = 0, kpairs_ = 0;
};

// Tiles times positions one call of qwino_tiles_avx2 takes at most (its products' buffer, 64
// bytes each, 48 KB from the caller's scratch: 48 tiles of F(2,3), 21 of F(4,3)).
constexpr int64_t kQWinoBufferTiles = 16 * 48;
// 9 * kQWinoInverse9 = 1 modulo 2^26 (F(4,3)'s 576 = 64 * 9).
constexpr int32_t kQWinoInverse9 = 14913081;
static_assert(9LL * kQWinoInverse9 % (1LL << 26) == 1);

// The AVX2 steps of QWinograd (kernels/int8/qwinograd_avx2.cpp).
// U of every panel (panel int16 apart, zeroed) from g (out_c x in_c x 9, centred), 16 output
// channels per vector.
void qwino_filters_avx2(const int16_t* g, int64_t out_c, int64_t in_c, int m, int64_t kpairs, int64_t panel,
                        int16_t* u);
// Tiles [t0, t1) transformed into v (positions * g.cs int16 per tile, from v's start).
void qwino_input_avx2(const QWinoGeometry& g, const uint8_t* x, uint8_t flip, int32_t x_zero, int64_t t0, int64_t t1,
                      int16_t* v);
// Tiles [t0, t1) (at most kQWinoBufferTiles / positions; v: tile t0's transform; m: a 64-byte
// aligned buffer of kQWinoBufferTiles x 16 int32 for the products) against panels [p0, p1) of u:
// products, inverse transform and epilogue into y (NHWC, all out_c channels per pixel; ep at
// column 0, rows are pixels).
void qwino_tiles_avx2(const QWinoGeometry& g, const int16_t* v, int64_t t0, int64_t t1, const int16_t* u, int64_t p0,
                      int64_t p1, const QEpilogue& ep, void* y, int32_t* m);

}  // namespace int8
}  // namespace fusor
