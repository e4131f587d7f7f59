// Vectorized loops over one contiguous row of floats, compiled per instruction set
// (row_ops_scalar.cpp, row_ops_avx2.cpp, row_ops_avx512.cpp over kernels/gemm/simd.h), for the fast
// kernels of row-wise ONNX ops: ReduceSum / ReduceMean over trailing axes and Softmax over the last
// axis (kernels/rowwise/fast_rowwise.cpp). row_ops() picks the set for active_isa().
//
// sum: the float sum of n elements, in kWidth lanes then across them (the reference kernel sums
// in double; the two differ by float rounding, about n * 6e-8 relative to the sum of |x|).
// softmax: y = exp(x - max x) / sum, exp by kernels/gemm/simd.h's polynomial (about 2e-7
// relative); y may be x. A row containing NaN gives NaN, +inf gives NaN as std::exp does.
#pragma once
#include <cstdint>

namespace fusor::rowwise {

struct RowOps {
  float (*sum)(const float* x, int64_t n);
  void (*softmax)(const float* x, float* y, int64_t n);
};

const RowOps& row_ops();

// The per-ISA sets (callers use row_ops()).
const RowOps& row_ops_scalar();
const RowOps& row_ops_avx2();
const RowOps& row_ops_avx512();

}  // namespace fusor::rowwise
