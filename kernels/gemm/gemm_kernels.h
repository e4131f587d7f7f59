// Internal interface between the GEMM driver (baseline code) and the per-ISA kernel files.
//
// Packed operands: A is cut into panels of `mr` rows, B into panels of `nr` columns. A panel holds
// kc steps of k, each step the mr (or nr) values of that k contiguous, rows/columns past the
// matrix edge zero. Panel p of a block starts at base + p * panel_stride. A may also be read in
// place (a_ld > 0): row i of the block at a + i * a_ld, its k steps contiguous; the microkernel
// then broadcasts from the rows themselves and only reads the block's mc rows.
#pragma once
#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/epilogue.h"

namespace fusor::gemm_detail {

struct MacroArgs {
  int64_t mc = 0, nc = 0, kc = 0;   // block of C: mc x nc, accumulating kc steps
  const float* a = nullptr;         // ceil(mc / mr) packed A panels, or A's rows when a_ld > 0
  int64_t a_panel_stride = 0;
  int64_t a_ld = 0;                 // > 0: A unpacked, row-major with this leading dimension
  const float* b = nullptr;         // ceil(nc / nr) packed B panels
  int64_t b_panel_stride = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;          // C += product (earlier k blocks) instead of C = product
  const Epilogue* ep = nullptr;     // last k block only; coordinates relative to c
  // B panels the caller will use next (a weight's next block, still in memory): prefetched into
  // L2 a share per register tile, so their streaming overlaps this whole block. None if null.
  const float* pf = nullptr;
  int64_t pf_panels = 0, pf_panel_floats = 0, pf_panel_stride = 0;
};

struct GemmKernelSet {
  Isa isa = Isa::Scalar;
  const char* name = "";
  int mr = 0, nr = 0;               // register tile
  // Throughput on whole tiles relative to the ISA's fastest set (bench/gemm_bench); 0: never
  // chosen by shape, only through FUSOR_GEMM_TILE.
  double rate = 1.0;
  int64_t mc = 0, nc = 0, kc = 0;   // cache blocks (multiples of mr / nr)
  void (*macro)(const MacroArgs&) = nullptr;
  // In place on stored values: c = act(scale * c + bias + residual), rows x cols.
  void (*apply_epilogue)(float* c, int64_t ldc, int64_t rows, int64_t cols, const Epilogue& ep) = nullptr;
  // A is read in place (not packed) when its row blocks meet at most this many register tiles of
  // columns and K has at least direct_min_k steps (kernels/gemm/gemm.cpp); packing pays only
  // over more tiles, or rows too short for the prefetcher.
  int64_t direct_max_tiles = 8;
  int64_t direct_min_k = 384;
  int variant = 0;                  // its index among the ISA's sets (set by gemm_kernels)
};

// The kernel set for an ISA at or below the detected one: the one expected fastest on an
// m x n product (a dimension of 0 is unknown and left out), its rate times the share of its tiles'
// rows and columns inside the matrix. FUSOR_GEMM_TILE=name forces a variant of that ISA (tuning).
const GemmKernelSet& gemm_kernels(Isa isa, int64_t m = 0, int64_t n = 0);
// Variant `variant` of an ISA's sets (GemmTile::variant: the set an operand was packed for).
const GemmKernelSet& gemm_kernels_variant(Isa isa, int variant);

// Defined per ISA file; `variant` 0 is the default, nullptr past the last.
const GemmKernelSet* gemm_kernels_avx512(int variant);
const GemmKernelSet* gemm_kernels_avx2(int variant);
const GemmKernelSet* gemm_kernels_scalar(int variant);

}  // namespace fusor::gemm_detail
