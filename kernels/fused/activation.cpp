#include "kernels/fused/activation.h"

#include <limits>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "kernels/common/dtype_dispatch.h"

namespace fusor::fused {

ActivationSpec activation_of(const Node& node) {
  const std::string name = node.attr_string("activation", "");
  const std::vector<float> p = node.attr_floats("activation_params");
  auto param = [&](size_t i, float dflt) { return i < p.size() ? p[i] : dflt; };
  size_t max_params = 0;
  ActivationSpec a;
  if (name.empty()) {
    a.kind = Activation::None;
  } else if (name == "Relu") {
    a.kind = Activation::Relu;
  } else if (name == "Clip") {
    a = ActivationSpec::clip(param(0, -std::numeric_limits<float>::infinity()),
                             param(1, std::numeric_limits<float>::infinity()));
    max_params = 2;
  } else if (name == "LeakyRelu") {
    a = ActivationSpec::leaky_relu(param(0, 0.01f));
    max_params = 1;
  } else if (name == "Sigmoid") {
    a.kind = Activation::Sigmoid;
  } else if (name == "Tanh") {
    a.kind = Activation::Tanh;
  } else if (name == "HardSigmoid") {
    a = ActivationSpec::hard_sigmoid(param(0, 0.2f), param(1, 0.5f));
    max_params = 2;
  } else if (name == "HardSwish") {
    a.kind = Activation::HardSwish;
  } else if (name == "Silu" || name == "SiLU" || name == "Swish") {
    a.kind = Activation::SiLU;
  } else if (name == "Gelu") {
    a.kind = Activation::Gelu;
  } else if (name == "GeluTanh") {
    a.kind = Activation::GeluTanh;
  } else {
    throw_bad_input(node.describe() + ": unsupported activation '" + name +
                    "' (expected \"\", Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Silu, Gelu or GeluTanh)");
  }
  if (p.size() > max_params)
    throw_bad_input(node.describe() + ": activation '" + name + "' takes " + std::to_string(max_params) +
                    " activation_params, got " + std::to_string(p.size()));
  return a;
}

void activate_in_place(Tensor& y, const ActivationSpec& act, const std::string& where) {
  if (act.kind == Activation::None) return;
  dispatch_float(y.dtype(), where, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = y.data<T>();
    for (int64_t i = 0; i < y.numel(); ++i) p[i] = activate<T>(act, p[i]);
  });
}

}  // namespace fusor::fused
