// Internal interface between the Winograd driver (winograd.cpp, baseline code) and the per-ISA
// files (winograd_{avx512,avx2,scalar}.cpp over winograd_impl.h).
//
// The driver cuts the output into strips of whole tile rows and hands one strip (and a range of
// output-channel blocks) at a time to `strip`, which runs on one thread with its own scratch:
//   1. pack:      the strip's input rows, zero-padded, into channel blocks of `lanes`:
//                 xs[cg][row][col][lane] (cg = c / lanes);
//   2. input transform: per tile and channel block, Bᵀ d B into v[ξ][cg][tile][lane]
//                 (ξ = the a*a positions of the transformed tile);
//   3. per block of nr output channels: for each ξ, the GEMM M_ξ[tile][k] = Σ_c v_ξ[tile][c] U_ξ[c][k]
//                 (U packed [kb][ξ][Cp][nr], tiles broadcast from v, channels vectorized), into
//                 mbuf[ξ][tile][nr];
//   4. output transform Aᵀ M A per tile and lane group into ys[kg][row][col][lane], then unpacked
//                 into Y's NCHW rows (valid rows and columns only). The epilogue is the driver's.
// Blocked layout (StripArgs::block): step 1 copies block rows, step 4 stores vectors of lanes with
// bias, residual and clamp applied in registers; other activations are the driver's.
#pragma once
#include <cstdint>

#include "kernels/cpu_features.h"

namespace fusor::winograd_detail {

struct StripArgs {
  int m = 4;                       // output tile (2 or 4); a = m + 2
  const float* x = nullptr;        // one image, NCHW: C x H x W
  int64_t C = 0, H = 0, W = 0;
  int64_t ih0 = 0, iw0 = 0;        // input row/column under the strip's first tile (may be < 0: padding)
  int64_t tile_rows = 0, TW = 0;   // tiles in the strip: tile_rows x TW
  const float* u = nullptr;        // packed filters [Kp / nr][a*a][Cp][nr]
  int64_t Cp = 0;                  // C rounded up to lanes
  int64_t kb0 = 0, kb1 = 0;        // output-channel blocks [kb0, kb1) of nr channels
  float* y = nullptr;              // one image, NCHW: K x OH x OW
  int64_t K = 0, OH = 0, OW = 0;
  int64_t oh0 = 0;                 // output row of the strip's first tile row
  // Blocked layout (block > 0, nchwc_format.h): x, y and z are one image [CB, H, W, block]; the
  // strip reads and writes them directly (no transposes) and applies bias, residual and a clamp
  // activation on each output vector before storing it (bias padded with zeros to Kp).
  int64_t block = 0;
  const float* bias = nullptr;
  const float* z = nullptr;
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
  // Scratch (the driver sizes them with scratch_floats()).
  float* xs = nullptr;
  float* v = nullptr;
  float* mbuf = nullptr;
  float* ys = nullptr;
};

struct KernelSet {
  Isa isa = Isa::Scalar;
  const char* name = "";
  int lanes = 1;  // channels per vector
  int mr = 1;     // tiles per register block
  int nr = 1;     // output channels per register block (a multiple of lanes)
  void (*strip)(const StripArgs&) = nullptr;
};

// The set for an ISA at or below the detected one.
const KernelSet& kernels(Isa isa);

const KernelSet* kernels_avx512();
const KernelSet* kernels_avx2();
const KernelSet* kernels_scalar();

}  // namespace fusor::winograd_detail
