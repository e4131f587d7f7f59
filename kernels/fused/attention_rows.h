// Row operations of the fast Attention kernel's online softmax, vectorized per ISA (the GEMM
// core's exp polynomial, kernels/gemm/simd.h): one key block of a query row's scores becomes its
// probabilities while the running max and sum are updated.
#pragma once
#include <cstdint>

#include "kernels/cpu_features.h"

namespace fusor::fused::attn {

struct RowOps {
  // One online-softmax step over the scores s[0, n) of one query row (masked keys are -inf):
  //   m' = max(m, max_j s[j]);  s[j] = exp(s[j] - m') (exactly 0 for -inf);
  //   sum = sum * exp(m - m') + sum_j s[j];  m = m'.
  // Returns exp(m - m'), the factor the row's accumulated output must be rescaled by (0 when m
  // was -inf, 1 when the max did not grow). A block with every score -inf zeroes s, leaves m and
  // sum, and returns 1.
  float (*softmax_step)(float* s, int64_t n, float& m, float& sum);
  // y[0, n) *= a.
  void (*scale)(float* y, int64_t n, float a);
  // y[0, n) += x[0, n).
  void (*add)(float* y, const float* x, int64_t n);
};

// The operations for `isa` (clamped to what the machine runs).
const RowOps& row_ops(Isa isa);

RowOps row_ops_avx512();
RowOps row_ops_avx2();
RowOps row_ops_scalar();

}  // namespace fusor::fused::attn
