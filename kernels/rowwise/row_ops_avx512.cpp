// AVX-512 row loops (compiled with -mavx512f...; called only after detection).
#define FUSOR_SIMD_NS simd_avx512
#include "kernels/gemm/simd.h"
#include "kernels/rowwise/row_ops_impl.h"

namespace fusor::rowwise {

const RowOps& row_ops_avx512() {
  using V = simd_avx512::V512;
  static const RowOps ops{&simd_avx512::row_sum<V>, &simd_avx512::row_softmax<V>, &simd_avx512::row_add_sum<V>,
                          &simd_avx512::row_norm<V, 24>};
  return ops;
}

}  // namespace fusor::rowwise
