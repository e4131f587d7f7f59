// The `activation` / `activation_params` attributes of fused ops (FusedConv, FusedGemm,
// FusedMatMul, NhwcConv, NhwcConvTranspose) read into the epilogue's ActivationSpec, and the
// activation applied in any precision (the reference kernels' definition).
//
// `activation` is an ONNX (or fusor) op name, "" for none: Relu, Clip, LeakyRelu, Sigmoid, Tanh,
// HardSigmoid, HardSwish, Silu (also SiLU, Swish), Gelu. `activation_params` holds its float
// attributes in the rule language's order: LeakyRelu [alpha] (0.01), Clip [min, max] (no bound),
// HardSigmoid [alpha, beta] (0.2, 0.5); missing ones take ONNX's defaults.
#pragma once
#include <cmath>

#include "core/ir/graph.h"
#include "kernels/epilogue.h"

namespace fusor::fused {

// Throws BadInput naming the node for an unknown activation or too many parameters.
ActivationSpec activation_of(const Node& node);
// Applies `act` to every element of a float tensor (the reference kernels' separate pass).
void activate_in_place(Tensor& y, const ActivationSpec& act, const std::string& where);

template <typename T>
T activate(const ActivationSpec& a, T x) {
  switch (a.kind) {
    case Activation::None: return x;
    case Activation::Relu: return x > T(0) ? x : T(0);
    case Activation::Clip: return std::min(std::max(x, T(a.alpha)), T(a.beta));
    case Activation::LeakyRelu: return x >= T(0) ? x : T(a.alpha) * x;
    case Activation::Sigmoid: return T(1) / (T(1) + std::exp(-x));
    case Activation::Tanh: return std::tanh(x);
    case Activation::HardSigmoid: return std::max(T(0), std::min(T(1), T(a.alpha) * x + T(a.beta)));
    case Activation::HardSwish: return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
    case Activation::SiLU: return x / (T(1) + std::exp(-x));
    case Activation::Gelu: return T(0.5) * x * (T(1) + std::erf(x / std::sqrt(T(2))));
    case Activation::GeluTanh:
      return T(0.5) * x * (T(1) + std::tanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x)));
  }
  return x;
}

}  // namespace fusor::fused
