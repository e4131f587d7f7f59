#include "kernels/reference/nn_families.h"
#include "kernels/register.h"

namespace fusor {

void register_misc_kernels(KernelRegistry& r) {
  register_misc_quant_kernels(r);
  register_misc_integer_kernels(r);
  register_misc_einsum_kernels(r);
  register_misc_det_kernels(r);
  register_misc_random_kernels(r);
}

}  // namespace fusor
