// Vectorized loops over one contiguous row of floats, compiled per instruction set
// (row_ops_scalar.cpp, row_ops_avx2.cpp, row_ops_avx512.cpp over kernels/gemm/simd.h), for the fast
// kernels of row-wise ONNX ops: ReduceSum / ReduceMean over trailing axes and Softmax over the last
// axis (kernels/rowwise/fast_rowwise.cpp). row_ops() picks the set for active_isa().
//
// sum: the float sum of n elements, in kWidth lanes then across them (the reference kernel sums
// in double; the two differ by float rounding, about n * 6e-8 relative to the sum of |x|).
// softmax: y = exp(x - max x) / sum, exp by kernels/gemm/simd.h's polynomial (about 2e-7
// relative); y may be x. A row containing NaN gives NaN, +inf gives NaN as std::exp does.
// norm: one whole row of LayerNorm (center) or RMSNorm (!center), of SkipLayerNorm with k: v = x
// (+ k (+ b), b read only with k), kept in s when s is not null; m = center ? mean(v) : 0; y =
// (v - m) * inv * scale (+ shift), inv = 1 / sqrt(mean((v - m)^2) + eps), each element of y
// rounded as that scalar expression (no fused multiply-add); y may be x
// (kernels/fused/norm.cpp calls it per row). Rows of up to 384 floats on AVX-512 (24 registers),
// 96 on AVX2 (12 of its 16: longer rows spilled and ran 11% slower than the passes) are held in
// registers and read once, their sums pairwise trees; longer rows and the scalar set take three
// passes (the row's sum, a skip row formed by add_sum below on the way; the squared deviations;
// the output), their sums in lanes then across as sum's. Both are float sums within sum's bound.
// add_sum: s = x + k (+ b when not null), each element (x + k) + b, returning the float sum() gives
// for s: the first of norm's passes.
#pragma once
#include <cstdint>

namespace fusor::rowwise {

struct RowOps {
  float (*sum)(const float* x, int64_t n);
  void (*softmax)(const float* x, float* y, int64_t n);
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
