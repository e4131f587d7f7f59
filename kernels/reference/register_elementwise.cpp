// The elementwise family of register.h: reference kernels of unary, binary, logic, variadic and
// cast ops, and the elementwise optimizer updates of ai.onnx.preview.training.
#include "kernels/reference/families.h"
#include "kernels/register.h"

namespace fusor {

void register_elementwise_kernels(KernelRegistry& r) {
  register_unary_kernels(r);
  register_binary_arith_kernels(r);
  register_logic_kernels(r);
  register_variadic_kernels(r);
  register_cast_kernels(r);
  register_optimizer_kernels(r);
}

}  // namespace fusor
