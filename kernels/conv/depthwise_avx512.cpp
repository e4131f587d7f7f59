// Depthwise loops compiled for avx512 (see depthwise_impl.h).
#define FUSOR_SIMD_NS dw_avx512
#include "kernels/conv/depthwise_impl.h"

namespace fusor::conv_detail {

const DepthwiseKernels& depthwise_kernels_avx512() {
  static constexpr DepthwiseKernels k{&dw_avx512::dw_plane_nchw, &dw_avx512::dw_rows_nhwc};
  return k;
}

}  // namespace fusor::conv_detail
