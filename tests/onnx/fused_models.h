// One small ONNX model per fusor-domain op (opset imports "" 17 and "fusor" 1), with shaped
// inputs and the output shape its schema's inference must give, written by hand from the op's
// definition (Conv/pool arithmetic, MatMul with transposes, NHWC order). Shared by the schema
// tests and the tool whose saved models Python's onnx.checker reads.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/onnx/proto_builder.h"

namespace fusor::test {

struct FusedCase {
  std::string op;
  std::vector<std::vector<int64_t>> inputs;  // shapes of the present inputs (in order)
  // names; an empty name marks an absent input (it has no shape in `inputs`)
  std::vector<std::string> input_names;
  int num_outputs = 1;
  std::vector<int64_t> expected;  // shape of output 0 (and of every other output)
  std::vector<onnx::AttributeProto> attrs;
  int mask_elem = onnx::TensorProto::FLOAT;  // element type of an Attention Mask input
  std::vector<int> elems = {};                // per input (quantized ops); empty: every input float
  int out_elem = onnx::TensorProto::FLOAT;   // element type of every output
};

inline onnx::AttributeProto attr_i(const std::string& n, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(n);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}
inline onnx::AttributeProto attr_f(const std::string& n, float v) {
  onnx::AttributeProto a;
  a.set_name(n);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
inline onnx::AttributeProto attr_s(const std::string& n, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(n);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}
inline onnx::AttributeProto attr_ints(const std::string& n, const std::vector<int64_t>& v) {
  onnx::AttributeProto a;
  a.set_name(n);
  a.set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a.add_ints(x);
  return a;
}
inline onnx::AttributeProto attr_floats(const std::string& n, const std::vector<float>& v) {
  onnx::AttributeProto a;
  a.set_name(n);
  a.set_type(onnx::AttributeProto::FLOATS);
  for (auto x : v) a.add_floats(x);
  return a;
}

inline std::vector<FusedCase> fused_cases() {
  using V = std::vector<int64_t>;
  constexpr int F = onnx::TensorProto::FLOAT, U8 = onnx::TensorProto::UINT8, I8 = onnx::TensorProto::INT8,
                I32 = onnx::TensorProto::INT32;
  return {
      // (8 + 2 - 3) / 2 + 1 = 4
      {"FusedConv", {V{1, 3, 8, 8}, V{4, 3, 3, 3}, V{4}, V{1, 4, 4, 4}}, {"X", "W", "B", "Z"}, 1, V{1, 4, 4, 4},
       {attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2}), attr_s("activation", "Clip"),
        attr_floats("activation_params", {0.0f, 6.0f})}},
      // transA: A is K x M = 5 x 7
      {"FusedGemm", {V{5, 7}, V{5, 3}, V{3}}, {"A", "B", "C"}, 1, V{7, 3},
       {attr_i("transA", 1), attr_s("activation", "Relu")}},
      // op(A) = 2x3x5x4, op(B) = 4x6
      {"FusedMatMul", {V{2, 3, 4, 5}, V{6, 4}, V{6}}, {"A", "B", "Bias"}, 1, V{2, 3, 5, 6},
       {attr_i("transA", 1), attr_i("transB", 1), attr_f("alpha", 0.5f)}},
      {"Gelu", {V{2, 9}}, {"X"}, 1, V{2, 9}, {attr_s("approximate", "tanh")}},
      {"BiasGelu", {V{2, 9}, V{9}}, {"X", "Bias"}, 1, V{2, 9}, {}},
      {"QuickGelu", {V{3, 1, 5}}, {"X"}, 1, V{3, 1, 5}, {}},
      {"Silu", {V{7}}, {"X"}, 1, V{7}, {}},
      {"LayerNorm", {V{2, 5, 16}, V{16}, V{16}}, {"X", "Scale", "B"}, 1, V{2, 5, 16}, {attr_f("epsilon", 1e-6f)}},
      {"RMSNorm", {V{2, 5, 16}, V{16}}, {"X", "Scale"}, 1, V{2, 5, 16}, {}},
      {"SkipLayerNorm", {V{2, 5, 16}, V{2, 5, 16}, V{16}, V{16}, V{16}}, {"X", "Skip", "Gamma", "Beta", "Bias"}, 2,
       V{2, 5, 16}, {}},
      {"Attention", {V{2, 4, 10, 8}, V{2, 4, 12, 8}, V{2, 4, 12, 16}, V{1, 1, 10, 12}}, {"Q", "K", "V", "Mask"}, 1,
       V{2, 4, 10, 16}, {attr_i("causal", 0)}, onnx::TensorProto::BOOL},
      {"MultiHeadAttention", {V{2, 10, 32}, V{2, 12, 32}, V{2, 12, 64}, V{2, 1, 1, 12}}, {"Q", "K", "V", "Mask"}, 1,
       V{2, 10, 64}, {attr_i("head_size", 8)}},
      {"PackedAttention", {V{2, 10, 96}}, {"QKV"}, 1, V{2, 10, 32}, {attr_i("head_size", 8), attr_i("causal", 1)}},
      // NHWC: 8x8x3 -> 8x8x4 with pads 1
      {"NhwcConv", {V{1, 8, 8, 3}, V{4, 3, 3, 3}, V{4}}, {"X", "W", "B"}, 1, V{1, 8, 8, 4},
       {attr_ints("pads", {1, 1, 1, 1}), attr_s("activation", "HardSwish")}},
      // 2 * (4 - 1) + 3 = 9; W is C x M/group x k x k = 3 x 2 x 3 x 3
      {"NhwcConvTranspose", {V{1, 4, 4, 3}, V{3, 2, 3, 3}}, {"X", "W"}, 1, V{1, 9, 9, 2},
       {attr_ints("strides", {2, 2})}},
      // (7 - 3) / 2 + 1 = 3
      {"NhwcMaxPool", {V{1, 7, 7, 5}}, {"X"}, 1, V{1, 3, 3, 5},
       {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2})}},
      {"NhwcAveragePool", {V{2, 7, 6, 5}}, {"X"}, 1, V{2, 6, 5, 5}, {attr_ints("kernel_shape", {2, 2})}},
      {"NhwcGlobalAveragePool", {V{1, 7, 7, 5}}, {"X"}, 1, V{1, 1, 1, 5}, {}},
      {"NhwcGlobalMaxPool", {V{3, 2, 9}}, {"X"}, 1, V{3, 1, 9}, {}},
      // The blocked layout NCHWc: [N, C, H, W] as [N, ceil(C / B), H, W, B].
      {"ReorderToNchwc", {V{1, 20, 3, 5}}, {"X"}, 1, V{1, 2, 3, 5, 16}, {attr_i("block", 16)}},
      {"ReorderFromNchwc", {V{2, 3, 3, 5, 8}}, {"X"}, 1, V{2, 20, 3, 5}, {attr_i("channels", 20)}},
      // 20 input channels (W), (8 + 2 - 3) / 2 + 1 = 4, 24 output channels in 2 blocks
      {"NchwcConv", {V{1, 2, 8, 8, 16}, V{24, 20, 3, 3}, V{24}}, {"X", "W", "B"}, 1, V{1, 2, 4, 4, 16},
       {attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2}), attr_s("activation", "Relu")}},
      // NCHW input (an RGB stem), blocked output
      {"NchwcConv", {V{1, 3, 8, 8}, V{20, 3, 3, 3}}, {"X", "W"}, 1, V{1, 2, 8, 8, 16}, {attr_ints("pads", {1, 1, 1, 1})}},
      {"NchwcMaxPool", {V{1, 2, 7, 7, 16}}, {"X"}, 1, V{1, 2, 3, 3, 16},
       {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2})}},
      {"NchwcAveragePool", {V{2, 1, 7, 6, 16}}, {"X"}, 1, V{2, 1, 6, 5, 16}, {attr_ints("kernel_shape", {2, 2})}},
      {"NchwcGlobalAveragePool", {V{1, 2, 7, 7, 16}}, {"X"}, 1, V{1, 2, 1, 1, 16}, {}},
      {"NchwcGlobalMaxPool", {V{3, 1, 2, 9, 8}}, {"X"}, 1, V{3, 1, 1, 1, 8}, {}},
      {"NchwcAffine", {V{2, 2, 3, 5, 16}, V{20}, V{20}}, {"X", "Scale", "Shift"}, 1, V{2, 2, 3, 5, 16},
       {attr_s("activation", "Relu")}},
      // F(4x4, 3x3): U is (6, 6, C, K); (7 + 1 + 1 - 2) x (9 + 0 + 2 - 2)
      {"WinogradConv", {V{1, 8, 7, 9}, V{6, 6, 8, 5}, V{5}}, {"X", "U", "B"}, 1, V{1, 5, 7, 9},
       {attr_i("tile", 4), attr_ints("pads", {1, 0, 1, 2}), attr_s("activation", "Relu")}},
      {"WinogradFilter", {V{5, 8, 3, 3}}, {"W"}, 1, V{6, 6, 8, 5}, {attr_i("tile", 4)}},
      // Quantized ops: uint8 activations, int8 weights, float scales, int32 bias.
      {"QConv", {V{1, 3, 8, 8}, V{4, 3, 3, 3}, V{4}, V{4}, V{4}}, {"X", "W", "WScale", "", "B", "BScale"}, 1,
       V{1, 4, 4, 4}, {attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2}), attr_f("x_scale", 0.5f),
                       attr_f("y_scale", 0.25f), attr_s("activation", "Relu")}, onnx::TensorProto::FLOAT,
       {U8, I8, F, I32, F}, U8},
      {"NhwcQConv", {V{1, 8, 8, 3}, V{4, 3, 3, 3}, V{1}}, {"X", "W", "WScale"}, 1, V{1, 8, 8, 4},
       {attr_ints("pads", {1, 1, 1, 1}), attr_f("x_scale", 0.5f), attr_f("y_scale", 0.25f)}, onnx::TensorProto::FLOAT,
       {U8, I8, F}, U8},
      // transB: B is N x K = 6 x 5
      {"QMatMul", {V{2, 3, 5}, V{6, 5}, V{6}}, {"A", "B", "BScale"}, 1, V{2, 3, 6},
       {attr_i("transB", 1), attr_f("x_scale", 0.5f), attr_f("y_scale", 0.25f)}, onnx::TensorProto::FLOAT,
       {U8, I8, F}, U8},
      {"QMatMulFloat", {V{4, 5}, V{5, 7}, V{1}, V{7}}, {"A", "B", "BScale", "", "Bias"}, 1, V{4, 7},
       {attr_f("x_scale", 0.5f)}, onnx::TensorProto::FLOAT, {U8, I8, F, F}, F},
      // A's scale and zero point are scalars computed at run time (DynamicQuantizeLinear's outputs)
      {"MatMulIntegerToFloat", {V{2, 4, 5}, V{5, 7}, V{}, V{7}, V{}, V{7}}, {"A", "B", "AScale", "BScale", "AZero", "", "Bias"},
       1, V{2, 4, 7}, {}, onnx::TensorProto::FLOAT, {U8, I8, F, F, U8, F}, F},
      // ConvInteger's: per-channel WScale shaped to broadcast over (N, C, H, W), bias as [1, C, 1, 1]
      {"ConvIntegerToFloat", {V{1, 3, 8, 8}, V{4, 3, 3, 3}, V{}, V{4, 1, 1}, V{}, V{}, V{1, 4, 1, 1}},
       {"X", "W", "XScale", "WScale", "XZero", "WZero", "B"}, 1, V{1, 4, 4, 4},
       {attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2}), attr_s("activation", "Relu")},
       onnx::TensorProto::FLOAT, {U8, U8, F, F, U8, U8, F}, F},
      {"NhwcConvIntegerToFloat", {V{1, 8, 8, 3}, V{4, 3, 3, 3}, V{}, V{}}, {"X", "W", "XScale", "WScale"}, 1,
       V{1, 8, 8, 4}, {attr_ints("pads", {1, 1, 1, 1})}, onnx::TensorProto::FLOAT, {U8, I8, F, F}, F},
      {"QAdd", {V{2, 1, 5}, V{3, 5}}, {"A", "B"}, 1, V{2, 3, 5},
       {attr_f("a_scale", 0.5f), attr_f("b_scale", 0.25f), attr_f("y_scale", 1.0f)}, onnx::TensorProto::FLOAT,
       {U8, U8}, U8},
      {"QMul", {V{4, 5}, V{5}}, {"A", "B"}, 1, V{4, 5},
       {attr_f("a_scale", 0.5f), attr_f("b_scale", 0.25f), attr_f("y_scale", 1.0f)}, onnx::TensorProto::FLOAT,
       {I8, I8}, I8},
      {"QLookup", {V{2, 7}, V{256}}, {"X", "Table"}, 1, V{2, 7}, {}, onnx::TensorProto::FLOAT, {U8, I8}, I8},
  };
}

// The one-node model of a case: inputs are graph inputs (float, the Attention mask as given),
// outputs declared with symbolic dims.
inline onnx::ModelProto fused_model(const FusedCase& c) {
  onnx::ModelProto m = make_model(17);
  auto* o = m.add_opset_import();
  o->set_domain("fusor");
  o->set_version(1);
  auto* g = m.mutable_graph();
  std::vector<std::string> outs;
  for (int i = 0; i < c.num_outputs; ++i) outs.push_back(i == 0 ? std::string("Y") : std::string("Y") += std::to_string(i));
  auto* n = add_node(g, c.op, c.input_names, outs, "fused");
  n->set_domain("fusor");
  n->set_doc_string("made by a test");
  for (const auto& a : c.attrs) *n->add_attribute() = a;
  for (size_t i = 0, shape = 0; i < c.input_names.size(); ++i) {
    if (c.input_names[i].empty()) continue;  // an absent optional input
    std::vector<DimSpec> dims(c.inputs[shape].begin(), c.inputs[shape].end());
    ++shape;
    int elem = (c.op == "Attention" || c.op == "MultiHeadAttention") && i == 3 ? c.mask_elem : onnx::TensorProto::FLOAT;
    if (!c.elems.empty()) elem = c.elems[shape - 1];
    add_vi(g->mutable_input(), c.input_names[i], elem, dims);
  }
  // Outputs declared with symbolic dims only (the checker wants a shape field): inference fills them.
  std::vector<DimSpec> unknown;
  for (size_t d = 0; d < c.expected.size(); ++d) {
    std::string name = "out_d";
    name += std::to_string(d);  // (not "out_d" + ...: GCC 12 warns falsely, -Wrestrict)
    unknown.push_back(name);
  }
  for (const auto& y : outs) add_vi(g->mutable_output(), y, c.out_elem, unknown);
  return m;
}

}  // namespace fusor::test
