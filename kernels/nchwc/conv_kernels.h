// Internal: the register-blocked tile kernels of the blocked convolution (kernels/nchwc/conv.h),
// compiled once per ISA (conv_<isa>.cpp) from conv_impl.h, and the plain-loop generic tile every
// case the compiled ones do not cover goes to (conv_generic.cpp).
//
// A tile is O output channel blocks x R output pixels of one output row (or of the flattened image
// of a 1x1 stride-1 conv), accumulated in registers over a chunk of input channel blocks. Every
// input value a tile reads is named by a "step": one input lane (a channel of a block, or a plane
// of an NCHW input) at one kernel tap, at a float offset from the tile's base pointer (offsets
// include the tap's row and column); step s of input block ib uses the O * B packed weights at
// w + ib * w_ib_stride + s * O * B (O blocks of B output channels). Pixel r of the tile reads the
// step's value at base + offset + r * PS (PS: the pixel stride in floats, stride * B for blocked
// input, stride for NCHW). Weights are packed in groups of up to kMaxO output blocks: step s of a
// group holds its blocks' B weights each, so a tile of O <= the group's blocks reads O * B floats
// at w + s * w_step (w_step = the group's blocks * B).
//
// The depthwise tile (one output block per input block, lane by lane) reads the input vector of
// pixel r at base + offset + r * PS and the tap's B weights at w + s * B.
//
// Padding is never materialized: a segment is a run of steps whose taps are valid for the tile's
// pixels [lead, R - trail) only (the others fall left or right of the image and are skipped);
// taps above or below the image are simply left out of the segments.
#pragma once
#include <cstdint>

#include "kernels/epilogue.h"

namespace fusor::nchwc_detail {

inline constexpr int kMaxO = 4;          // output blocks per tile
inline constexpr int kMaxR = 14;         // pixels per tile
inline constexpr int kMaxSegments = 64;  // kernel columns

struct Segment {
  int32_t s0, s1;       // steps [s0, s1)
  int32_t lead, trail;  // pixels [lead, R - trail) read these steps
};

struct TileArgs {
  const float* x = nullptr;       // input block 0 at the tile's pixel 0, tap (0, 0) (may point outside X)
  int64_t x_ib_stride = 0;        // floats between input blocks
  int64_t nib = 0;                // input blocks of this chunk
  const int32_t* off = nullptr;   // step offsets (floats)
  const Segment* seg = nullptr;
  int32_t nseg = 0;
  const float* w = nullptr;       // packed weights of this chunk (the tile's first block)
  int64_t w_ib_stride = 0;        // floats per input block
  int64_t w_step = 0;             // floats per step
  float* y = nullptr;             // pixel 0 of output block 0 of the tile
  int64_t y_block_stride = 0;     // floats between output blocks
  const float* bias = nullptr;    // O * B values (read when first), or null for zero
  const float* z = nullptr;       // residual at the tile (same strides as y; read when last), or null
  bool first = true;              // start from bias (else from y)
  bool last = true;               // add z, clamp to [lo, hi], then act
  float lo = 0, hi = 0;           // the clamp (-inf, inf when none)
  // A non-clamp activation the compiled tiles apply in registers before the store (when last):
  // one of tile_activation()'s kinds, else None (the driver then runs it in a pass of its own).
  Activation act = Activation::None;
  float alpha = 0, beta = 0;      // its parameters (kernels/epilogue.h)
  // Lanes of the chunk's last input block that are channels (0: all B). The other lanes are
  // padding whose weights are zero, so a tile may skip their steps (the compiled dense tiles do:
  // a conv over 24 channels makes 24 steps per tap, not 32); tap_lanes is the steps per tap of
  // an input block (B).
  int32_t tail_lanes = 0, tap_lanes = 0;
  // Depthwise with a kernel dw_kw = 3 wide, stride and dilation 1 along rows (0: other): a
  // compiled depthwise tile whose taps all lie inside the image's columns may then walk kernel
  // rows, loading each input pixel of the row once for the dw_kw taps that read it.
  int32_t dw_kw = 0, dw_kh = 0;  // and the kernel's height
};

// The non-clamp activations the compiled tiles (not the generic ones) apply in registers: the
// CNN ones (efficientnet's SiLU, mobilenet_v3's HardSwish, squeeze-excite gates).
inline bool tile_activation(Activation a) {
  return a == Activation::SiLU || a == Activation::Sigmoid || a == Activation::HardSwish ||
         a == Activation::HardSigmoid;
}

using TileFn = void (*)(const TileArgs&);

// A run of consecutive tiles of one image, one pack group (or depthwise block) and one chunk:
// tiles t in [t0, t1) of the image's out_h x nt tiles, tile t = (oy, j) = (t / nt, t % nt). Every
// tile of a row has R pixels but the last, which has out_w - (nt - 1) R. The run builds each
// tile's segments from the tables and calls the tile, so a tile costs no call through the driver.
struct TileRun {
  TileArgs a;                          // all but x, y, z, seg, nseg (set per tile)
  const float* x0 = nullptr;           // tile (oy, j) reads at x0 + oy * x_row + j * x_col
  int64_t x_row = 0, x_col = 0;
  float* y0 = nullptr;                 // and writes at y0 + (oy * out_w + j * R) * B
  const float* z0 = nullptr;           // residual likewise (null: none)
  const int32_t* row_kh = nullptr;     // per output row: the valid kernel rows [kh_lo, kh_hi)
  const int32_t* col_lt = nullptr;     // per tile column and kernel column: lead, trail
  int32_t k_h = 1, k_w = 1, lanes = 1; // steps of kernel column kw, rows [lo, hi): (kw k_h + lo..hi) lanes
  int64_t nt = 1, R = 1, out_w = 1, block = 16;
  int64_t t0 = 0, t1 = 0;
  TileFn last_tile = nullptr;          // the tile of a row's shorter last tile (when R does not divide out_w)
};

using RunFn = void (*)(const TileRun&);

// The compiled tiles of one ISA for block B = 16: dense(o, r, pixel stride) and
// depthwise(r, pixel stride), or null when not compiled.
struct TileKernels {
  int max_acc = 0;  // o * r <= max_acc for a dense tile (r <= kMaxR)
  int max_dw_r = 0; // r <= max_dw_r for a depthwise tile
  TileFn (*dense)(int o, int r, int ps) = nullptr;
  TileFn (*depthwise)(int r, int ps) = nullptr;
  RunFn (*dense_run)(int o, int r, int ps) = nullptr;  // runs of tiles of R = r pixels
  RunFn (*depthwise_run)(int r, int ps) = nullptr;
  // Half-block tiles (conv_impl.h HalfGroupTile): one output block of a grouped conv whose groups
  // (icg == ocg, dividing 8) stay inside one half of a block, block-diagonal weights with
  // w_step = B, blocked input at pixel stride 16 or 32; r <= max_half_r. Null (0) when the ISA
  // has none (AVX-512: a block is one vector).
  int max_half_r = 0;
  TileFn (*half)(int r, int ps) = nullptr;
  RunFn (*half_run)(int r, int ps) = nullptr;
  // Half-last dense tiles (conv_impl.h DenseTile kHalfLast): O blocks whose last has only its
  // first half as channels (out_c % 16 == 8 on a two-vector block), which they neither compute nor
  // load; they store zeros to its second half (padding lanes). Blocked input at pixel stride 16 or
  // 32; (2 o - 1) * r <= max_vec_acc. Null (0) when the ISA has none (AVX-512).
  int max_vec_acc = 0;
  TileFn (*half_last)(int o, int r, int ps) = nullptr;
  RunFn (*half_last_run)(int o, int r, int ps) = nullptr;
  // Packed weight bytes per chunk of input blocks for 1x1 convs (0: the driver's default).
  int64_t pointwise_chunk_bytes = 0;
};

const TileKernels* tile_kernels_avx512();
const TileKernels* tile_kernels_avx2();

// Any O, R, PS, B: plain loops (the scalar path and the shapes no compiled tile covers).
void tile_generic(const TileArgs& a, int o, int r, int ps, int block);
void tile_depthwise_generic(const TileArgs& a, int r, int ps, int block);
void run_generic(const TileRun& run, int o, int ps);
void run_depthwise_generic(const TileRun& run, int ps);

}  // namespace fusor::nchwc_detail
