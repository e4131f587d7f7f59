#include "kernels/xnnpack/xnn_kernels.h"

#include "kernels/register.h"

namespace fusor {

namespace xnnpack {

std::optional<Clamp> clamp_of(const ActivationSpec& act) {
  switch (act.kind) {
    case Activation::None: return Clamp{};
    case Activation::Relu: return Clamp{0.0f, std::numeric_limits<float>::infinity()};
    case Activation::Clip: return Clamp{act.alpha, act.beta};
    default: return std::nullopt;
  }
}

const Tensor* const_float_input(const KernelInfo& info, size_t i) {
  if (i >= info.const_inputs.size() || !info.const_inputs[i]) return nullptr;
  const Tensor* t = info.const_inputs[i].get();
  return t->dtype() == DataType::Float ? t : nullptr;
}

bool input_known_not_float(const KernelInfo& info, size_t i) {
  return i < info.input_types.size() && info.input_types[i] && info.input_types[i]->elem != DataType::Undefined &&
         info.input_types[i]->elem != DataType::Float;
}

}  // namespace xnnpack

// Registers nothing when XNNPACK is absent; when it fails to initialize (checked on first use, not
// here) its kernels refuse to be created (xnnpack_status() says why).
void register_xnnpack_kernels(KernelRegistry& r) {
#ifdef FUSOR_HAVE_XNNPACK
  xnnpack::register_xnnpack_conv(r);
  xnnpack::register_xnnpack_pool(r);
  xnnpack::register_xnnpack_fully_connected(r);
  xnnpack::register_xnnpack_deconv(r);
#else
  (void)r;
#endif
}

}  // namespace fusor
