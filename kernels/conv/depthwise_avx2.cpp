// Depthwise loops compiled for avx2 (see depthwise_impl.h).
#define FUSOR_SIMD_NS dw_avx2
#include "kernels/conv/depthwise_impl.h"

namespace fusor::conv_detail {

const DepthwiseKernels& depthwise_kernels_avx2() {
  static constexpr DepthwiseKernels k{&dw_avx2::dw_plane_nchw, &dw_avx2::dw_rows_nhwc};
  return k;
}

}  // namespace fusor::conv_detail
