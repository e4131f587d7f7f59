// Shape rules of ONNX MatMul (numpy matmul), shared by MatMul, MatMulInteger, QLinearMatMul and
// the fast GEMM path.
//
//   A (..., M, K) x B (..., K, N) -> Y (batch..., M, N), batch dims broadcast numpy-style.
//   A 1-D (K) is treated as (1, K) and the M dim is dropped from Y; B 1-D (K) as (K, 1) and the
//   N dim is dropped.
//
//   MatMulShape s = matmul_shape(a.shape(), b.shape(), where);   // BadInput on mismatch
//   for (int64_t i = 0; i < s.batch_count(); ++i) {
//     const T* ai = a + s.a_matrix(i) * s.M * s.K;   // row-major M x K
//     const T* bi = b + s.b_matrix(i) * s.K * s.N;   // row-major K x N
//     T* yi = y + i * s.M * s.N;
//   }
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor {

struct MatMulShape {
  int64_t M = 0, K = 0, N = 0;
  Shape out;      // Y's shape
  Shape batch;    // broadcast batch dims (possibly empty)
  Shape a_batch;  // A's batch dims, left-padded with 1 to batch.size()
  Shape b_batch;

  int64_t batch_count() const { return shape_numel(batch); }
  // Index of the M x K matrix of A (resp. K x N of B) used by output batch i.
  int64_t a_matrix(int64_t i) const { return matrix_index(i, a_batch); }
  int64_t b_matrix(int64_t i) const { return matrix_index(i, b_batch); }

 private:
  int64_t matrix_index(int64_t i, const Shape& src) const;
};

MatMulShape matmul_shape(const Shape& a, const Shape& b, const std::string& where);

}  // namespace fusor
