#include "kernels/reference/nn_families.h"
#include "kernels/register.h"

namespace fusor {

void register_nn_kernels(KernelRegistry& r) {
  register_nn_matmul_kernels(r);
  register_nn_conv_kernels(r);
  register_nn_pool_kernels(r);
  register_nn_norm_kernels(r);
  register_nn_softmax_kernels(r);
  register_nn_unpool_roialign_kernels(r);
}

}  // namespace fusor
