// Baseline row loops (one lane; any x86-64), and the choice of set for active_isa().
#define FUSOR_SIMD_NS simd_scalar
#include "kernels/gemm/simd.h"
#include "kernels/cpu_features.h"
#include "kernels/rowwise/row_ops_impl.h"

namespace fusor::rowwise {

const RowOps& row_ops_scalar() {
  using V = simd_scalar::V1;
  static const RowOps ops{&simd_scalar::row_sum<V>, &simd_scalar::row_softmax<V>, &simd_scalar::row_add_sum<V>,
                          &simd_scalar::row_norm<V, 0>};
  return ops;
}

const RowOps& row_ops() {
  switch (active_isa()) {
    case Isa::Avx512: return row_ops_avx512();
    case Isa::Avx2: return row_ops_avx2();
    default: return row_ops_scalar();
  }
}

}  // namespace fusor::rowwise
