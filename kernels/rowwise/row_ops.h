// Vectorized loops over one contiguous row of floats, compiled per instruction set
// (row_ops_scalar.cpp, row_ops_avx2.cpp, row_ops_avx512.cpp over kernels/gemm/simd.h), for the fast
// kernels of row-wise ONNX ops: ReduceSum / ReduceMean over trailing axes and Softmax over the last
// axis (kernels/rowwise/fast_rowwise.cpp). row_ops() picks the set for active_isa().
//
// sum: the float sum of n elements, in kWidth lanes then across them (the reference kernel sums
// in double; the two differ by float rounding, about n * 6e-8 relative to the sum of |x|).
// softmax: y = exp(x - max x) / sum, exp by kernels/gemm/simd.h's polynomial (about 2e-7
// relative); y may be x. A row containing NaN gives NaN, +inf gives NaN as std::exp does.
// sq_dev: the float sum of (x - m)^2, in kWidth lanes (two accumulators) then across them, the
// ragged tail one by one. normalize: y = (x - m) * inv * scale (+ shift when not null), each
// element rounded as that scalar expression (no fused multiply-add); y may be x. With sum, the
// pieces of LayerNorm and RMSNorm; add_sum forms SkipLayerNorm's input row and its sum in one
// pass. norm: one whole row of LayerNorm (center) or RMSNorm (!center), of SkipLayerNorm with k:
// v = x (+ k (+ b), b read only with k), kept in s when s is not null; m = center ? mean(v) : 0;
// y = (v - m) * inv * scale (+ shift), inv = 1 / sqrt(mean((v - m)^2) + eps); y may be x. Rows
// of up to 384 floats on AVX-512 (24 registers), 96 on AVX2 (12 of its 16: longer rows spilled
// and ran 11% slower than the passes) are held in registers and read once, their sums pairwise
// trees (float sums in another order than sum / sq_dev's, within the same bound); longer rows
// and the scalar set use the passes above (kernels/fused/norm.cpp calls norm per row).
#pragma once
#include <cstdint>

namespace fusor::rowwise {

struct RowOps {
  float (*sum)(const float* x, int64_t n);
  void (*softmax)(const float* x, float* y, int64_t n);
  float (*sq_dev)(const float* x, int64_t n, float m);
  void (*normalize)(const float* x, float* y, int64_t n, float m, float inv, const float* scale, const float* shift);
  // s = x + k (+ b when not null), each element (x + k) + b; returns sum(s, n) (the same float).
  float (*add_sum)(const float* x, const float* k, const float* b, float* s, int64_t n);
  void (*norm)(const float* x, const float* k, const float* b, float* s, float* y, int64_t n, const float* scale,
               const float* shift, float eps, bool center);
};

const RowOps& row_ops();

// The per-ISA sets (callers use row_ops()).
const RowOps& row_ops_scalar();
const RowOps& row_ops_avx2();
const RowOps& row_ops_avx512();

}  // namespace fusor::rowwise
