// LayerNorm, RMSNorm, SkipLayerNorm, Gelu, BiasGelu, QuickGelu, Silu and the NHWC pools: the
// fast kernel against the reference kernel, and both against the chains of ONNX ops the fusion
// rules match (ReduceMean/Sub/Pow/.../Add for LayerNorm, Erf or Tanh forms of GELU, ...), run
// through their own reference kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>

#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {
namespace {

Tensor reduce_mean(const Tensor& x, std::vector<int64_t> axes) {
  return onnx_op("ReduceMean", {x}, {Attribute::make_ints("axes", std::move(axes)), Attribute::make_int("keepdims", 1)});
}

// LayerNorm written out: (x - mean) / sqrt(mean((x - mean)^2) + eps) * scale + b.
Tensor layer_norm_chain(const Tensor& x, const Tensor& scale, const Tensor* b, std::vector<int64_t> axes, float eps) {
  const Tensor d = onnx_op("Sub", {x, reduce_mean(x, axes)});
  const Tensor var = reduce_mean(onnx_op("Pow", {d, scalar(2.0f)}), axes);
  Tensor y = onnx_op("Mul", {onnx_op("Div", {d, onnx_op("Sqrt", {onnx_op("Add", {var, scalar(eps)})})}), scale});
  return b ? onnx_op("Add", {y, *b}) : y;
}

Tensor rms_norm_chain(const Tensor& x, const Tensor& scale, std::vector<int64_t> axes, float eps) {
  const Tensor ms = reduce_mean(onnx_op("Pow", {x, scalar(2.0f)}), axes);
  return onnx_op("Mul", {onnx_op("Div", {x, onnx_op("Sqrt", {onnx_op("Add", {ms, scalar(eps)})})}), scale});
}

TEST(FusedLayerNorm, FastAndReferenceMatchTheWrittenOutChain) {
  struct Case {
    Shape x;
    int64_t axis;
  };
  uint32_t seed = 1;
  for (const auto& c : {Case{{2, 5, 33}, -1}, Case{{1, 1}, -1}, Case{{3, 4, 5, 7}, -2}, Case{{2, 300}, 1}, Case{{4, 8}, 0},
                        Case{{3, 96}, -1}, Case{{2, 37}, -1}}) {
    const int r = static_cast<int>(c.x.size());
    const int64_t axis = c.axis < 0 ? c.axis + r : c.axis;
    std::vector<int64_t> axes;
    Shape row;
    for (int64_t d = axis; d < r; ++d) axes.push_back(d), row.push_back(c.x[d]);
    // Data offset from zero, as real activations are, to exercise the variance's cancellation.
    const Tensor x = rnd(c.x, seed++, 2.0f, 4.0f), scale = rnd(row, seed++), b = rnd(row, seed++);
    const std::vector<Attribute> attrs{Attribute::make_int("axis", c.axis), Attribute::make_float("epsilon", 1e-3f)};
    const Tensor want = layer_norm_chain(x, scale, &b, axes, 1e-3f);
    const Tensor ref = fused("LayerNorm", {x, scale, b}, attrs, "reference");
    EXPECT_TRUE(near(ref, want, 1e-4)) << shape_str(c.x);
    const Tensor want_nb = layer_norm_chain(x, scale, nullptr, axes, 1e-3f);
    const Tensor rms_want = rms_norm_chain(x, scale, axes, 1e-3f);
    EXPECT_TRUE(near(fused("RMSNorm", {x, scale}, attrs, "reference"), rms_want, 1e-5)) << shape_str(c.x);
    for (Isa isa : testing_gemm::runnable_isas()) {  // the fast kernels' row loops per instruction set
      set_isa_env(isa_name(isa));
      EXPECT_TRUE(near(fused("LayerNorm", {x, scale, b}, attrs, "fast"), want, 1e-4)) << shape_str(c.x) << " " << isa_name(isa);
      EXPECT_TRUE(near(fused("LayerNorm", {x, scale}, attrs, "fast"), want_nb, 1e-4)) << shape_str(c.x) << " no B " << isa_name(isa);
      EXPECT_TRUE(near(fused("RMSNorm", {x, scale}, attrs, "fast"), rms_want, 1e-5)) << shape_str(c.x) << " " << isa_name(isa);
      set_isa_env(nullptr);
    }
  }
}

TEST(FusedSkipLayerNorm, FastAndReferenceMatchAddThenLayerNorm) {
  uint32_t seed = 50;
  for (const Shape& s : {Shape{2, 5, 33}, Shape{1, 768}, Shape{3, 7}}) {
    const int64_t h = s.back();
    const Tensor x = rnd(s, seed++), skip = rnd(s, seed++), gamma = rnd({h}, seed++), beta = rnd({h}, seed++),
                 bias = rnd({h}, seed++);
    const int last = static_cast<int>(s.size()) - 1;
    const std::vector<Attribute> attrs{Attribute::make_float("epsilon", 1e-5f)};
    for (bool with_bias : {false, true}) {
      Tensor sum = onnx_op("Add", {x, skip});
      if (with_bias) sum = onnx_op("Add", {sum, bias});
      const Tensor want = layer_norm_chain(sum, gamma, &beta, {last}, 1e-5f);
      std::vector<Tensor> ins{x, skip, gamma, beta};
      if (with_bias) ins.push_back(bias);
      for (const char* impl : {"reference", "fast"}) {
        const auto outs = run_fused("SkipLayerNorm", ins, attrs, impl, 2);
        EXPECT_TRUE(near(outs[0], want, 1e-4)) << impl << " " << shape_str(s);
        EXPECT_TRUE(near(outs[1], sum, 1e-6)) << impl << " Sum " << shape_str(s);
        // Y alone (Sum not wanted): the fast kernel keeps the row in Y.
        EXPECT_TRUE(near(run_fused("SkipLayerNorm", ins, attrs, impl, 1)[0], want, 1e-4)) << impl;
      }
    }
  }
}

Tensor gelu_erf_chain(const Tensor& x) { return onnx_activation("Gelu", {}, x); }

Tensor gelu_tanh_chain(const Tensor& x) {
  const Tensor x3 = onnx_op("Pow", {x, scalar(3.0f)});
  const Tensor inner = onnx_op("Mul", {onnx_op("Add", {x, onnx_op("Mul", {x3, scalar(0.044715f)})}), scalar(0.7978845608f)});
  return onnx_op("Mul", {onnx_op("Mul", {x, scalar(0.5f)}), onnx_op("Add", {onnx_op("Tanh", {inner}), scalar(1.0f)})});
}

TEST(FusedActivations, FastAndReferenceMatchTheWrittenOutForms) {
  uint32_t seed = 80;
  for (const Shape& s : {Shape{7}, Shape{2, 3, 4099}, Shape{1}, Shape{5, 17}}) {
    const Tensor x = rnd(s, seed++, -5.0f, 5.0f);
    const Tensor bias = rnd({s.back()}, seed++);
    const Tensor xb = onnx_op("Add", {x, bias});
    struct Case {
      const char* op;
      std::vector<Tensor> ins;
      std::vector<Attribute> attrs;
      Tensor want;
    };
    const std::vector<Case> cases = {
        {"Gelu", {x}, {}, gelu_erf_chain(x)},
        {"Gelu", {x}, {Attribute::make_string("approximate", "tanh")}, gelu_tanh_chain(x)},
        {"BiasGelu", {x, bias}, {}, gelu_erf_chain(xb)},
        {"BiasGelu", {x, bias}, {Attribute::make_string("approximate", "tanh")}, gelu_tanh_chain(xb)},
        {"QuickGelu", {x}, {}, onnx_op("Mul", {x, onnx_op("Sigmoid", {onnx_op("Mul", {x, scalar(1.702f)})})})},
        {"QuickGelu", {x}, {Attribute::make_float("alpha", -0.5f)},
         onnx_op("Mul", {x, onnx_op("Sigmoid", {onnx_op("Mul", {x, scalar(-0.5f)})})})},
        {"Silu", {x}, {}, onnx_activation("Silu", {}, x)},
    };
    for (const auto& c : cases) {
      EXPECT_TRUE(near(fused(c.op, c.ins, c.attrs, "reference"), c.want, 1e-5)) << c.op << " " << shape_str(s);
      EXPECT_TRUE(near(fused(c.op, c.ins, c.attrs, "fast"), c.want, 1e-5)) << c.op << " " << shape_str(s);
    }
  }
}

// ONNX's activation ops on their fast kernel (the vectorized epilogue) against their reference
// kernel (scalar library calls): several chunks of 4096 and a ragged end, NaN and the tails.
TEST(OnnxActivations, FastMatchesReference) {
  Tensor x = rnd({3, 5, 1111}, 90, -12.0f, 12.0f);
  x.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[8] = 95.0f, x.data<float>()[9] = -95.0f, x.data<float>()[10] = 0.0f;
  const std::vector<std::pair<const char*, std::vector<Attribute>>> cases = {
      {"Sigmoid", {}},
      {"Tanh", {}},
      {"HardSwish", {}},
      {"HardSigmoid", {Attribute::make_float("alpha", 0.3f), Attribute::make_float("beta", 0.4f)}},
      {"LeakyRelu", {Attribute::make_float("alpha", 0.07f)}},
  };
  for (const auto& [op, attrs] : cases) {
    const Tensor want = run_node(OpType("", op), {x}, attrs, "reference", 1, {}, 17)[0];
    const Tensor got = run_node(OpType("", op), {x}, attrs, "fast", 1, {}, 17)[0];
    ASSERT_EQ(got.shape(), want.shape()) << op;
    for (int64_t i = 0; i < want.numel(); ++i) {
      const float g = got.data<float>()[i], w = want.data<float>()[i];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << op << " at " << i;
        continue;
      }
      EXPECT_NEAR(g, w, 2e-6 * (1 + std::fabs(w))) << op << " at " << i << " x=" << x.data<float>()[i];
    }
  }
}

// GELU's fast form (a rational erf on x clamped to [-8, 8]) at the ends of the float range: no
// overflow in the division on any instruction set, NaN kept, +-inf to +inf / 0 as the reference.
TEST(FusedActivations, GeluAtTheEndsOfTheRange) {
  Tensor x = rnd({2, 37}, 91, -12.0f, 12.0f);
  const float ends[] = {95.0f, -95.0f, 1e30f, -1e30f, 3.4e38f, -3.4e38f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(), 0.0f, 5.5f, -5.5f, 8.0f, -8.0f};
  for (size_t i = 0; i < std::size(ends); ++i) x.data<float>()[i] = ends[i];
  x.data<float>()[20] = std::numeric_limits<float>::quiet_NaN();
  const Tensor want = fused("Gelu", {x}, {}, "reference"), got = fused("Gelu", {x}, {}, "fast");
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << "at " << i;
      continue;
    }
    if (std::isinf(w)) {
      EXPECT_EQ(g, w) << "at " << i;
      continue;
    }
    EXPECT_NEAR(g, w, 2e-6 * (1 + std::fabs(w))) << "at " << i << " x=" << x.data<float>()[i];
  }
}

TEST(FusedActivations, BroadcastBiasAndBadApproximate) {
  const Tensor x = rnd({3, 4, 5}, 1), bias = rnd({4, 1}, 2);
  EXPECT_TRUE(near(fused("BiasGelu", {x, bias}, {}, "fast"), gelu_erf_chain(onnx_op("Add", {x, bias})), 1e-5));
  EXPECT_THROW(fused("Gelu", {x}, {Attribute::make_string("approximate", "erf")}, "fast"), Error);
}

TEST(NhwcPools, MatchTransposedOnnxPools) {
  const Tensor x = rnd({2, 7, 6, 5}, 9);  // N, H, W, C
  const Tensor xc = transpose(x, {0, 3, 1, 2});
  struct Case {
    const char* fused_op;
    const char* onnx;
    std::vector<Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {"NhwcMaxPool", "MaxPool",
       {Attribute::make_ints("kernel_shape", {3, 2}), Attribute::make_ints("strides", {2, 1}),
        Attribute::make_ints("pads", {1, 0, 1, 1}), Attribute::make_int("ceil_mode", 1)}},
      {"NhwcAveragePool", "AveragePool",
       {Attribute::make_ints("kernel_shape", {2, 3}), Attribute::make_ints("pads", {0, 1, 1, 1}),
        Attribute::make_int("count_include_pad", 1)}},
      {"NhwcAveragePool", "AveragePool", {Attribute::make_ints("kernel_shape", {3, 3}), Attribute::make_string("auto_pad", "SAME_UPPER")}},
      {"NhwcGlobalAveragePool", "GlobalAveragePool", {}},
      {"NhwcGlobalMaxPool", "GlobalMaxPool", {}},
  };
  for (const auto& c : cases) {
    const Tensor want = transpose(onnx_op(c.onnx, {xc}, c.attrs), {0, 2, 3, 1});
    // The fast average pools sum in float, the reference in double: a few ulps apart.
    EXPECT_TRUE(near(fused(c.fused_op, {x}, c.attrs, ""), want, 1e-6)) << c.fused_op;
  }
  EXPECT_THROW(fused("NhwcMaxPool", {rnd({4, 5}, 1)}, {Attribute::make_ints("kernel_shape", {2})}, ""), Error);
}

}  // namespace
}  // namespace fusor::test
