// fusor's GEMM core: C = epilogue(A * B), single precision, row-major with arbitrary leading
// dimensions, transposes handled while packing.
//
// Structure (BLIS-like): C is cut into cache blocks (mc x nc, accumulated over kc steps of k);
// A and B blocks are packed into panels of mr rows / nr columns; a register-blocked microkernel
// (AVX-512 6x64 or 14x32 chosen by the product's shape, AVX2 6x16, scalar 4x8) computes each
// mr x nr tile and applies the epilogue
// (kernels/epilogue.h) on the last k block while the tile is in registers (scale, bias, residual,
// Relu/Clip) or L1 (the other activations). Blocks of C are spread over the ThreadPool.
//
// Constant operands (weights) are packed once into PackedA / PackedB at kernel creation; a packed
// operand is bound to the kernel set (ISA and tile) it was packed for, chosen by its known
// dimension (PackedB: N, PackedA: M), and a call with it runs that set. Given a Prepacker
// (KernelInfo::prepack), the panels are a prepacked buffer (kernels/prepack.h) named NAME + "/" +
// the kernel set ("b/avx512_6x64"): mapped from a session image when the session was restored
// from one.
//
// Scratch: GemmRun::scratch supplies temporary memory (KernelContext::scratch in kernels); when
// it is empty the call allocates from the heap (tests, benchmarks).
//
// Prefetch hint: the calling thread's WeightsHint (set_weights_hint; the executor sets it per node
// to the next weighted node's Kernel::weights) is read at the call's start; the call's last blocks
// prefetch up to its first 512 KiB into L2 where its own next blocks are already cached. It is only
// read through prefetches (never dereferenced), so it changes no result.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/epilogue.h"
#include "kernels/prepack.h"

namespace fusor {

class ThreadPool;

// A read-only view of a row-major matrix; with `trans`, the view is of its transpose:
// element (i, j) is data[i * ld + j], or data[j * ld + i] when trans.
struct MatrixRef {
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  float at(int64_t i, int64_t j) const { return trans ? data[j * ld + i] : data[i * ld + j]; }
  MatrixRef transposed() const { return {data, ld, !trans}; }
};

struct GemmRun {
  ThreadPool* pool = nullptr;                         // nullptr: the calling thread only
  std::function<void*(size_t bytes)> scratch;         // 64-byte aligned; empty: heap
  std::optional<Isa> isa;                             // unset: active_isa() (ignored with packed operands)
};

// Panel geometry of a kernel set.
struct GemmTile {
  Isa isa = Isa::Scalar;
  int mr = 0, nr = 0;
  const char* name = "";
  int variant = 0;  // among the ISA's sets
};
// The set an m x n product runs on with this ISA (0: that dimension unknown): the tile expected
// fastest, its measured rate times the share of its tiles inside the matrix (6x64 unless 32-wide
// tiles fit the columns clearly better). FUSOR_GEMM_TILE=name forces one (tuning).
GemmTile gemm_tile(Isa isa, int64_t m = 0, int64_t n = 0);

// An operand packed once into the kernel's panel layout: PackedA holds an M x K matrix as
// ceil(M / mr) panels, PackedB a K x N matrix as ceil(N / nr) panels; each panel is K steps of
// mr (nr) values, zero-padded past the edge.
class PackedMatrix {
 public:
  PackedMatrix() = default;
  bool empty() const { return !data_; }
  Isa isa() const { return tile_.isa; }
  const GemmTile& tile() const { return tile_; }
  int64_t rows() const { return rows_; }     // M (PackedA) or K (PackedB)
  int64_t cols() const { return cols_; }     // K (PackedA) or N (PackedB)
  const float* data() const { return data_.get(); }
  int64_t panel_stride() const { return panel_stride_; }
  size_t bytes() const { return bytes_; }  // all its panels

 protected:
  std::shared_ptr<const float> data_;
  GemmTile tile_;
  int64_t rows_ = 0, cols_ = 0, panel_stride_ = 0;
  size_t bytes_ = 0;
};

class PackedA : public PackedMatrix {
 public:
  PackedA() = default;
  PackedA(MatrixRef a, int64_t M, int64_t K, std::optional<Isa> isa = {}, const Prepacker& pp = {},
          std::string_view name = "a");
};

class PackedB : public PackedMatrix {
 public:
  PackedB() = default;
  PackedB(MatrixRef b, int64_t K, int64_t N, std::optional<Isa> isa = {}, const Prepacker& pp = {},
          std::string_view name = "b");
  // Same, with B made by `make_b` only when the panels are filled (not when they come from a
  // session image); `keep` holds the storage it points into while packing.
  PackedB(int64_t K, int64_t N, const std::function<MatrixRef(std::vector<float>& keep)>& make_b,
          std::optional<Isa> isa, const Prepacker& pp, std::string_view name);
};

// The next node's weights (Kernel::weights), set by the executor on the thread that runs a node:
// a GEMM whose own next blocks are in cache already prefetches these into L2 instead, so the next
// GEMM's first block does not come from L3 or memory at its first row of tiles' pace.
struct WeightsHint {
  const void* data = nullptr;
  size_t bytes = 0;
};
void set_weights_hint(WeightsHint h);
WeightsHint weights_hint();

// C (M x N, leading dimension ldc) = epilogue(A (M x K) * B (K x N)).
void gemm(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
          const Epilogue& ep = {}, const GemmRun& run = {});
// Same with B pre-packed (K = B.rows(), N = B.cols()).
void gemm(int64_t M, MatrixRef A, const PackedB& B, float* C, int64_t ldc, const Epilogue& ep = {},
          const GemmRun& run = {});
// Same with A pre-packed (M = A.rows(), K = A.cols()).
void gemm(const PackedA& A, int64_t N, MatrixRef B, float* C, int64_t ldc, const Epilogue& ep = {},
          const GemmRun& run = {});

// The general form, for operands produced on the fly (implicit im2col in the conv paths), on the
// kernel set `tile` (a pre-packed operand's tile(): both must have been packed for it).
// A source either is pre-packed, or packs on request: pack(i0, m, k0, kc, dst) writes
// ceil(m / r) panels of kc steps x r values (r = tile.mr for A, tile.nr for B) for rows (A) / columns (B)
// [i0, i0 + m) and k in [k0, k0 + kc), zero past the matrix edge, panel p at dst + p * kc * r.
// pack is called concurrently from several threads with different dst.
// For A, `rows` may give the matrix itself when it is row-major (not transposed): when each A
// panel meets only a few B panels, so that packing it would cost a large share of its use, the
// microkernel reads those rows in place instead (same results).
struct PanelSource {
  const PackedMatrix* packed = nullptr;
  std::function<void(int64_t i0, int64_t m, int64_t k0, int64_t kc, float* dst)> pack;
  MatrixRef rows;
};
void gemm_panels(const GemmTile& tile, int64_t M, int64_t N, int64_t K, const PanelSource& A, const PanelSource& B,
                 float* C, int64_t ldc, const Epilogue& ep = {}, const GemmRun& run = {});

// Runs body(i, run_i) for i in [0, count): independent GEMMs of about `flops_each` flops each
// (batched MatMul, grouped convolution). When they are many and small, the threads take whole
// GEMMs (run_i has no pool and its own scratch: one fork-join in all); otherwise body runs them
// in order with `run` and each GEMM splits its own blocks when it is worth it. Every body call
// gets scratch that is reused across the GEMMs of its thread; run.scratch may be called from
// several threads at once (KernelContext::scratch may).
void for_each_gemm(int64_t count, double flops_each, const GemmRun& run,
                   const std::function<void(int64_t i, const GemmRun& run_i)>& body);

// In place on a row-major block: c = act(scale * c + bias + residual), vectorized for the ISA
// (the separate-pass form of the epilogue, for paths that are not a GEMM).
void apply_epilogue(float* c, int64_t ldc, int64_t rows, int64_t cols, const Epilogue& ep,
                    std::optional<Isa> isa = {});

// Packs rows [i0, i0 + m) x k [k0, k0 + kc) of the view X (element (i, k) = X.at(i, k)) into
// panels of r rows, zero-padded (the packing of A; B is packed as its transposed view).
void pack_panels(MatrixRef X, int64_t i0, int64_t m, int64_t k0, int64_t kc, int r, float* dst);

}  // namespace fusor
