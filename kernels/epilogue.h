// The epilogue of a GEMM or convolution: what happens to each output element after the dot
// product, applied on the output tile while it is still in registers or L1, so a fused op costs
// no extra pass over memory.
//
// For output element (r, c) of the C matrix of one call (r: row, c: column, relative to the C
// pointer handed to that call), with acc the dot product:
//
//     y = act( scale * acc + bias[r or c] + residual[r * residual_ld + c] )
//
// in that order: scale, bias, residual add, activation. This is ORT's FusedConv order with a Sum
// input (Conv + Add + Relu). Each part is optional:
//   - scale: Gemm's alpha (1 otherwise).
//   - bias: one value per row (BiasAxis::PerRow: NCHW convolution, rows are output channels) or
//     per column (PerColumn: MatMul/Gemm, and NHWC convolution where columns are channels).
//   - residual: a tensor of C's shape (its own leading dimension), e.g. the skip connection.
//     It may alias the output (the same pointer and ld): each element is read before written.
//   - act with its parameters (alpha, beta), as ONNX defines them:
//       Relu        max(x, 0)
//       Clip        min(max(x, alpha), beta)           (alpha = min, beta = max)
//       LeakyRelu   x >= 0 ? x : alpha * x
//       Sigmoid     1 / (1 + exp(-x))
//       Tanh        tanh(x)
//       HardSigmoid max(0, min(1, alpha * x + beta))   (ONNX defaults alpha 0.2, beta 0.5)
//       HardSwish   x * max(0, min(1, x / 6 + 1 / 2))
//       SiLU        x * sigmoid(x)                     (Swish; Mul(x, Sigmoid(x)))
//       Gelu        0.5 * x * (1 + erf(x / sqrt(2)))   (exact GELU, approximate="none")
//
// The vectorized paths use polynomial exp/erf; they agree with the scalar formulas below to
// about 1e-6 relative (the tests hold them to that).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace fusor {

// Gelu is the exact (erf) form; GeluTanh the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
enum class Activation : uint8_t { None, Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, SiLU, Gelu, GeluTanh };

enum class BiasAxis : uint8_t { None, PerRow, PerColumn };

const char* activation_name(Activation a);

struct ActivationSpec {
  Activation kind = Activation::None;
  float alpha = 0.0f;
  float beta = 0.0f;

  static ActivationSpec relu() { return {Activation::Relu, 0, 0}; }
  static ActivationSpec clip(float lo, float hi) { return {Activation::Clip, lo, hi}; }
  static ActivationSpec leaky_relu(float a = 0.01f) { return {Activation::LeakyRelu, a, 0}; }
  static ActivationSpec hard_sigmoid(float a = 0.2f, float b = 0.5f) { return {Activation::HardSigmoid, a, b}; }
  static ActivationSpec of(Activation k) { return {k, 0, 0}; }
};

struct Epilogue {
  float scale = 1.0f;
  const float* bias = nullptr;
  BiasAxis bias_axis = BiasAxis::None;
  const float* residual = nullptr;
  int64_t residual_ld = 0;
  ActivationSpec act;

  bool has_bias() const { return bias && bias_axis != BiasAxis::None; }
  // Nothing to do beyond storing the product.
  bool trivial() const { return scale == 1.0f && !has_bias() && !residual && act.kind == Activation::None; }
  // The activation is a clamp (None, Relu, Clip): done in registers by every path.
  bool act_is_clamp() const {
    return act.kind == Activation::None || act.kind == Activation::Relu || act.kind == Activation::Clip;
  }
  float clamp_lo() const {
    return act.kind == Activation::Relu ? 0.0f : act.kind == Activation::Clip ? act.alpha : -std::numeric_limits<float>::infinity();
  }
  float clamp_hi() const {
    return act.kind == Activation::Clip ? act.beta : std::numeric_limits<float>::infinity();
  }
  // The same epilogue for the sub-matrix of C starting at (row0, col0).
  Epilogue offset(int64_t row0, int64_t col0) const {
    Epilogue e = *this;
    if (e.bias) e.bias += bias_axis == BiasAxis::PerRow ? row0 : bias_axis == BiasAxis::PerColumn ? col0 : 0;
    if (e.residual) e.residual += row0 * residual_ld + col0;
    return e;
  }
};

// The scalar definition every path is checked against.
inline float apply_activation(const ActivationSpec& a, float x) {
  switch (a.kind) {
    case Activation::None: return x;
    case Activation::Relu: return x > 0.0f ? x : 0.0f;
    case Activation::Clip: return std::min(std::max(x, a.alpha), a.beta);
    case Activation::LeakyRelu: return x >= 0.0f ? x : a.alpha * x;
    case Activation::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Activation::Tanh: return std::tanh(x);
    case Activation::HardSigmoid: return std::max(0.0f, std::min(1.0f, a.alpha * x + a.beta));
    case Activation::HardSwish: return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f));
    case Activation::SiLU: return x / (1.0f + std::exp(-x));
    case Activation::Gelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case Activation::GeluTanh: return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  }
  return x;
}

inline float apply_epilogue(const Epilogue& e, float acc, int64_t r, int64_t c) {
  float y = e.scale * acc;
  if (e.has_bias()) y += e.bias[e.bias_axis == BiasAxis::PerRow ? r : c];
  if (e.residual) y += e.residual[r * e.residual_ld + c];
  return apply_activation(e.act, y);
}

inline const char* activation_name(Activation a) {
  switch (a) {
    case Activation::None: return "None";
    case Activation::Relu: return "Relu";
    case Activation::Clip: return "Clip";
    case Activation::LeakyRelu: return "LeakyRelu";
    case Activation::Sigmoid: return "Sigmoid";
    case Activation::Tanh: return "Tanh";
    case Activation::HardSigmoid: return "HardSigmoid";
    case Activation::HardSwish: return "HardSwish";
    case Activation::SiLU: return "SiLU";
    case Activation::Gelu: return "Gelu";
    case Activation::GeluTanh: return "GeluTanh";
  }
  return "?";
}

}  // namespace fusor
