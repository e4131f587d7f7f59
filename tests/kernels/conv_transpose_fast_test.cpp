// The fast 2-D ConvTranspose (kernels/conv/conv_transpose.cpp) against the reference kernel,
// with W as a run-time input and as a constant (packed once): strides, dilations, asymmetric
// pads, output_padding, output_shape, groups, batch > 1, no bias, pixel counts above the
// columns chunk.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

struct Case {
  const char* name;
  Shape x, w;  // X (N, C, H, W); W (C, M/group, kh, kw)
  std::vector<Attribute> attrs;
  bool bias;
};

std::vector<Case> cases() {
  using A = Attribute;
  return {
      {"k2s2_paddle", {1, 8, 10, 12}, {8, 4, 2, 2}, {A::make_ints("strides", {2, 2})}, true},
      {"k3s1_pad", {2, 5, 7, 6}, {5, 3, 3, 3}, {A::make_ints("pads", {1, 1, 1, 1})}, true},
      {"k3s2_asym_outpad", {1, 4, 5, 7}, {4, 6, 3, 3},
       {A::make_ints("strides", {2, 2}), A::make_ints("pads", {0, 1, 1, 0}), A::make_ints("output_padding", {1, 0})},
       false},
      {"dilated", {1, 3, 6, 6}, {3, 2, 3, 2}, {A::make_ints("dilations", {2, 3}), A::make_ints("strides", {1, 2})}, true},
      {"groups", {2, 6, 5, 5}, {6, 2, 3, 3}, {A::make_int("group", 3), A::make_ints("strides", {2, 1})}, true},
      {"output_shape", {1, 4, 5, 5}, {4, 2, 3, 3},
       {A::make_ints("strides", {2, 2}), A::make_ints("output_shape", {10, 11})}, true},
      {"many_pixels", {1, 3, 300, 400}, {3, 5, 2, 2}, {A::make_ints("strides", {2, 2})}, true},
      // Stride equal to the kernel (each output pixel one tap), and larger (gaps left at the bias).
      {"k3s3_groups_batch", {2, 6, 7, 5}, {6, 2, 3, 3}, {A::make_int("group", 2), A::make_ints("strides", {3, 3})}, false},
      {"k2s3_gaps", {1, 4, 5, 6}, {4, 3, 2, 2}, {A::make_ints("strides", {3, 3})}, true},
  };
}

Tensor run_ct(const Case& c, const Tensor& x, const Tensor& w, const Tensor& b, bool w_const, std::string_view impl) {
  Graph g;
  std::vector<ValueId> ins = {g.add_value("x", ValueType::tensor(DataType::Float, x.shape())),
                              g.add_value("w", ValueType::tensor(DataType::Float, w.shape()))};
  if (w_const) g.value(ins[1]).constant = std::make_shared<Tensor>(w);
  std::vector<const Tensor*> ptrs = {&x, &w};
  if (c.bias) {
    ins.push_back(g.add_value("b", ValueType::tensor(DataType::Float, b.shape())));
    ptrs.push_back(&b);
  }
  NodeId n = g.create_node(OpType::onnx("ConvTranspose"), ins, 1, c.attrs, "ct");
  return run_kernel(KernelRegistry::global(), g, g.node(n), 17, ptrs, impl)[0];
}

TEST(FastConvTranspose, MatchesReference) {
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    const int64_t group = c.attrs.size() && c.attrs[0].name == "group" ? c.attrs[0].i : 1;
    const Tensor x = rnd(c.x, seed++), w = rnd(c.w, seed++), b = rnd({c.w[1] * group}, seed++);
    const Tensor want = run_ct(c, x, w, b, false, "reference");
    EXPECT_TRUE(near(run_ct(c, x, w, b, false, "fast"), want, 1e-5)) << c.name << " (W an input)";
    EXPECT_TRUE(near(run_ct(c, x, w, b, true, "fast"), want, 1e-5)) << c.name << " (W constant, packed)";
  }
}

TEST(FastConvTranspose, OtherTypesAndRanksFallBack) {
  // 1-D ConvTranspose: the reference kernel answers through the fast kernel.
  const Case c{"1d", {1, 2, 7}, {2, 3, 3}, {Attribute::make_ints("strides", {2})}, false};
  const Tensor x = rnd(c.x, 5), w = rnd(c.w, 6), b;
  EXPECT_TRUE(near(run_ct(c, x, w, b, false, "fast"), run_ct(c, x, w, b, false, "reference"), 0));
}

}  // namespace
}  // namespace fusor::test
