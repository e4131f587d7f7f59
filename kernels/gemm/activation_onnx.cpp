#include "kernels/gemm/activation_onnx.h"

#include <limits>
#include <string>

namespace fusor {

std::optional<ActivationSpec> activation_from_name(std::string_view name, const std::vector<float>& p) {
  const size_t n = p.size();
  auto none = [&](Activation a) -> std::optional<ActivationSpec> {
    if (n != 0) return std::nullopt;
    return ActivationSpec::of(a);
  };
  if (name.empty() || name == "None") return none(Activation::None);
  if (name == "Relu") return none(Activation::Relu);
  if (name == "Sigmoid") return none(Activation::Sigmoid);
  if (name == "Tanh") return none(Activation::Tanh);
  if (name == "HardSwish") return none(Activation::HardSwish);
  if (name == "SiLU" || name == "Swish") return none(Activation::SiLU);
  if (name == "Gelu") return none(Activation::Gelu);
  if (name == "GeluTanh") return none(Activation::GeluTanh);
  if (name == "Clip") {
    if (n != 2) return std::nullopt;
    return ActivationSpec::clip(p[0], p[1]);
  }
  if (name == "LeakyRelu") {
    if (n > 1) return std::nullopt;
    return ActivationSpec::leaky_relu(n ? p[0] : 0.01f);
  }
  if (name == "HardSigmoid") {
    if (n != 0 && n != 2) return std::nullopt;
    return n ? ActivationSpec::hard_sigmoid(p[0], p[1]) : ActivationSpec::hard_sigmoid();
  }
  return std::nullopt;
}

std::optional<ActivationSpec> activation_of_node(const Node& node, std::optional<float> clip_min,
                                                 std::optional<float> clip_max) {
  const std::string& dom = node.op.domain();
  const std::string& op = node.op.name();
  if (dom == "com.microsoft" && op == "Gelu") return ActivationSpec::of(Activation::Gelu);
  if (!dom.empty()) return std::nullopt;
  if (op == "Relu") return ActivationSpec::relu();
  if (op == "Sigmoid") return ActivationSpec::of(Activation::Sigmoid);
  if (op == "Tanh") return ActivationSpec::of(Activation::Tanh);
  if (op == "HardSwish") return ActivationSpec::of(Activation::HardSwish);
  if (op == "LeakyRelu") return ActivationSpec::leaky_relu(node.attr_float("alpha", 0.01f));
  if (op == "HardSigmoid") return ActivationSpec::hard_sigmoid(node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f));
  if (op == "Gelu") {
    const std::string a = node.attr_string("approximate", "none");
    if (a == "tanh") return ActivationSpec::of(Activation::GeluTanh);
    if (a != "none") return std::nullopt;
    return ActivationSpec::of(Activation::Gelu);
  }
  if (op == "Clip") {
    const float inf = std::numeric_limits<float>::infinity();
    float lo = node.attr_float("min", clip_min.value_or(-inf));
    float hi = node.attr_float("max", clip_max.value_or(inf));
    return ActivationSpec::clip(lo, hi);
  }
  return std::nullopt;
}

}  // namespace fusor
