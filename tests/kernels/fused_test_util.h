// Helpers of the fusor-domain kernel tests: run a fused op through a chosen implementation, run
// ONNX ops through their reference kernels (the composition a fused op replaces), compare.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/kernels/gemm_test_util.h"
#include "tests/kernels/nn_harness.h"

namespace fusor::test {

inline Tensor rnd(const Shape& s, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return Tensor::from_vector<float>(s, testing_gemm::random_vec(static_cast<size_t>(shape_numel(s)), seed, lo, hi));
}

// Runs one node of `type` (opset `opset` of its domain) with implementation `impl` ("reference" /
// "fast"). Undefined tensors in `ins` are absent inputs; inputs flagged in `constant` are
// initializers the kernel sees at creation.
inline std::vector<Tensor> run_node(const OpType& type, const std::vector<Tensor>& ins, std::vector<Attribute> attrs,
                                    std::string_view impl, int num_outputs, const std::vector<bool>& constant,
                                    int64_t opset) {
  Graph g;
  std::vector<ValueId> vals;
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!ins[i].defined()) {
      vals.push_back(kNoValue);
      ptrs.push_back(nullptr);
      continue;
    }
    ValueId v = g.add_value("in" + std::to_string(i), ValueType::tensor(ins[i].dtype(), ins[i].shape()));
    if (i < constant.size() && constant[i]) g.value(v).constant = std::make_shared<Tensor>(ins[i]);
    vals.push_back(v);
    ptrs.push_back(&ins[i]);
  }
  NodeId n = g.create_node(type, vals, num_outputs, std::move(attrs), "n");
  return run_kernel(KernelRegistry::global(), g, g.node(n), opset, ptrs, impl);
}

// Runs fusor::`op` (see run_node).
inline std::vector<Tensor> run_fused(const std::string& op, const std::vector<Tensor>& ins, std::vector<Attribute> attrs,
                                     std::string_view impl, int num_outputs = 1, const std::vector<bool>& constant = {}) {
  return run_node(OpType("fusor", op), ins, std::move(attrs), impl, num_outputs, constant, 1);
}

inline Tensor fused(const std::string& op, const std::vector<Tensor>& ins, std::vector<Attribute> attrs,
                    std::string_view impl, const std::vector<bool>& constant = {}) {
  return run_fused(op, ins, std::move(attrs), impl, 1, constant)[0];
}

// One ONNX op through its reference kernel (opset 17).
inline Tensor onnx_op(const std::string& op, const std::vector<Tensor>& ins, std::vector<Attribute> attrs = {}) {
  std::vector<const Tensor*> ptrs;
  for (const auto& t : ins) ptrs.push_back(t.defined() ? &t : nullptr);
  return run_op(op, ptrs, std::move(attrs))[0];
}

inline Tensor scalar(float v) { return Tensor::scalar<float>(v); }

// The activation as the ONNX ops a fusion replaces (Silu and Gelu written out).
inline Tensor onnx_activation(const std::string& name, const std::vector<float>& p, const Tensor& x) {
  if (name.empty()) return x;
  if (name == "Clip") return onnx_op("Clip", {x, scalar(p.at(0)), scalar(p.at(1))});
  if (name == "LeakyRelu") return onnx_op("LeakyRelu", {x}, {Attribute::make_float("alpha", p.at(0))});
  if (name == "HardSigmoid")
    return onnx_op("HardSigmoid", {x}, {Attribute::make_float("alpha", p.at(0)), Attribute::make_float("beta", p.at(1))});
  if (name == "Silu") return onnx_op("Mul", {x, onnx_op("Sigmoid", {x})});
  if (name == "Gelu") {
    Tensor e = onnx_op("Erf", {onnx_op("Div", {x, scalar(1.41421356f)})});
    return onnx_op("Mul", {onnx_op("Mul", {x, onnx_op("Add", {e, scalar(1.0f)})}), scalar(0.5f)});
  }
  return onnx_op(name, {x});  // Relu, Sigmoid, Tanh, HardSwish
}

struct ActCase {
  std::string name;
  std::vector<float> params;
};
inline std::vector<ActCase> act_cases() {
  return {{"", {}},           {"Relu", {}},    {"Clip", {-0.3f, 0.4f}},        {"LeakyRelu", {0.1f}}, {"Sigmoid", {}},
          {"Tanh", {}},       {"HardSigmoid", {0.3f, 0.4f}}, {"HardSwish", {}}, {"Silu", {}},         {"Gelu", {}}};
}
inline std::vector<Attribute> act_attrs(const ActCase& a) {
  std::vector<Attribute> out{Attribute::make_string("activation", a.name)};
  if (!a.params.empty()) out.push_back(Attribute::make_floats("activation_params", a.params));
  return out;
}

inline ::testing::AssertionResult near(const Tensor& got, const Tensor& want, double tol) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << " vs " << shape_str(want.shape());
  if (got.dtype() != want.dtype()) return ::testing::AssertionFailure() << "dtype differs";
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.as_double(i), w = want.as_double(i);
    if (!(std::fabs(g - w) <= tol * (1 + std::fabs(w))))
      return ::testing::AssertionFailure() << "element " << i << " of " << want.numel() << ": " << g << " vs " << w;
  }
  return ::testing::AssertionSuccess();
}

// A tensor of 8-bit type t (uint8, int8) with random bytes.
inline Tensor random_bytes(const Shape& s, DataType t, uint32_t seed) {
  std::mt19937 g(seed);
  Tensor out(t, s);
  for (int64_t i = 0; i < out.numel(); ++i) out.data<uint8_t>()[i] = static_cast<uint8_t>(g());
  return out;
}

inline Tensor transpose(const Tensor& t, std::vector<int64_t> perm) {
  return onnx_op("Transpose", {t}, {Attribute::make_ints("perm", std::move(perm))});
}

}  // namespace fusor::test
