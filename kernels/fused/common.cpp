#include "kernels/fused/common.h"

#include <cstring>

#include "kernels/register.h"

namespace fusor::fused {

void write_output(KernelContext& ctx, int i, const Tensor& t) {
  Tensor& y = ctx.output(i, t.shape(), t.dtype());
  if (t.nbytes()) std::memcpy(y.raw(), t.raw(), t.nbytes());
}

}  // namespace fusor::fused

namespace fusor {

void register_fused_kernels(KernelRegistry& r) {
  fused::register_fused_conv_kernels(r);
  fused::register_fused_winograd_kernels(r);
  fused::register_fused_winograd_filter_kernels(r);
  fused::register_fused_gemm_kernels(r);
  fused::register_fused_elementwise_kernels(r);
  fused::register_fused_norm_kernels(r);
  fused::register_fused_attention_kernels(r);
  fused::register_fused_multi_head_attention_kernels(r);
  fused::register_fused_pool_kernels(r);
  fused::register_onnx_activation_kernels(r);
}

}  // namespace fusor
