// Depthwise loops compiled for scalar (see depthwise_impl.h).
#define FUSOR_SIMD_NS dw_scalar
#include "kernels/conv/depthwise_impl.h"

namespace fusor::conv_detail {

const DepthwiseKernels& depthwise_kernels_scalar() {
  static constexpr DepthwiseKernels k{&dw_scalar::dw_plane_nchw, &dw_scalar::dw_rows_nhwc};
  return k;
}

}  // namespace fusor::conv_detail
