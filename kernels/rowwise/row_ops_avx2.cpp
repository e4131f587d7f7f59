// AVX2 row loops (compiled with -mavx2 -mfma; called only after detection).
#define FUSOR_SIMD_NS simd_avx2
#include "kernels/gemm/simd.h"
#include "kernels/rowwise/row_ops_impl.h"

namespace fusor::rowwise {

const RowOps& row_ops_avx2() {
  using V = simd_avx2::V256;
  static const RowOps ops{&simd_avx2::row_sum<V>, &simd_avx2::row_softmax<V>, &simd_avx2::row_add_sum<V>,
                          &simd_avx2::row_norm<V, 12>};
  return ops;
}

}  // namespace fusor::rowwise
