#include "kernels/int8/qops.h"
#include "kernels/register.h"

namespace fusor {

void register_int8_kernels(KernelRegistry& r) {
  int8::register_int8_reference_kernels(r);
  int8::register_int8_conv_kernels(r);
  int8::register_int8_matmul_kernels(r);
  int8::register_int8_dynamic_matmul_kernels(r);
  int8::register_int8_binary_kernels(r);
  int8::register_int8_quantize_kernels(r);
  int8::register_int8_pool_kernels(r);
}

}  // namespace fusor
