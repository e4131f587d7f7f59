// ONNX spellings of the epilogue's activations (kernels/epilogue.h), for the fused ops
// (fusor.FusedConv / FusedGemm / FusedMatMul) and the rules that build them.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "core/ir/graph.h"
#include "kernels/epilogue.h"

namespace fusor {

// By name and parameters, as ORT's FusedConv "activation" / "activation_params" attributes:
//   "Relu", "Sigmoid", "Tanh", "HardSwish", "SiLU" (also "Swish"), "Gelu": no parameters;
//   "Clip" {min, max}; "LeakyRelu" {alpha} (default 0.01); "HardSigmoid" {alpha, beta}
//   (default 0.2, 0.5); "" or "None": identity. nullopt for an unknown name or a wrong number of
//   parameters.
std::optional<ActivationSpec> activation_from_name(std::string_view name, const std::vector<float>& params = {});

// The activation computed by a single ONNX node (domain "" or "com.microsoft" for Gelu), or
// nullopt when the node is not one. Clip reads min/max from attributes (opset < 11) or from the
// values its caller resolved from constant inputs (clip_min / clip_max; absent: unbounded).
// Gelu counts only with approximate="none" (the epilogue's Gelu is the erf form).
std::optional<ActivationSpec> activation_of_node(const Node& node, std::optional<float> clip_min = {},
                                                 std::optional<float> clip_max = {});

}  // namespace fusor
