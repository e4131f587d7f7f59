// FusedConv, NhwcConv, NhwcConvTranspose, FusedGemm and FusedMatMul: the fast kernel against the
// reference kernel, and the reference kernel against the ONNX ops the fusion replaces, run
// through their own reference kernels (Conv + Add + activation, Gemm + activation, ...).
#include <gtest/gtest.h>

#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

struct ConvCase {
  const char* what;
  Shape x, w;
  int64_t group;
  std::vector<int64_t> pads, strides, dilations;
};

std::vector<ConvCase> conv_cases() {
  return {
      {"3x3 asymmetric pads, stride 2, batch 2", {2, 3, 9, 7}, {5, 3, 3, 3}, 1, {1, 0, 2, 1}, {2, 2}, {1, 1}},
      {"groups 2, odd channels", {1, 6, 8, 5}, {4, 3, 3, 2}, 2, {0, 1, 0, 1}, {1, 1}, {1, 1}},
      {"depthwise, dilation 2", {2, 5, 10, 9}, {5, 1, 3, 3}, 5, {2, 2, 2, 2}, {1, 1}, {2, 2}},
      {"1x1", {1, 7, 5, 6}, {9, 7, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}},
      {"1-D", {2, 4, 17}, {3, 4, 5}, 1, {2, 1}, {2}, {1}},
  };
}

std::vector<Attribute> conv_attrs(const ConvCase& c) {
  return {Attribute::make_int("group", c.group), Attribute::make_ints("pads", c.pads),
          Attribute::make_ints("strides", c.strides), Attribute::make_ints("dilations", c.dilations)};
}

TEST(FusedConv, FastAndReferenceMatchConvAddActivation) {
  uint32_t seed = 1;
  for (const auto& c : conv_cases()) {
    const Tensor x = rnd(c.x, seed++), w = rnd(c.w, seed++), b = rnd({c.w[0]}, seed++);
    const Tensor conv = onnx_op("Conv", {x, w, b}, conv_attrs(c));
    const Tensor z = rnd(conv.shape(), seed++);
    for (const auto& act : act_cases()) {
      auto attrs = conv_attrs(c);
      for (auto& a : act_attrs(act)) attrs.push_back(a);
      const std::string what = std::string(c.what) + " activation '" + act.name + "'";
      // With the residual Z.
      const Tensor want = onnx_activation(act.name, act.params, onnx_op("Add", {conv, z}));
      const Tensor ref = fused("FusedConv", {x, w, b, z}, attrs, "reference");
      EXPECT_TRUE(near(ref, want, 1e-5)) << what;
      for (bool constant : {false, true})
        EXPECT_TRUE(near(fused("FusedConv", {x, w, b, z}, attrs, "fast", {false, constant, constant, false}), ref, 1e-4))
            << what << (constant ? " (packed weights)" : "");
      // Without residual and bias.
      const Tensor want_nb = onnx_activation(act.name, act.params, onnx_op("Conv", {x, w}, conv_attrs(c)));
      EXPECT_TRUE(near(fused("FusedConv", {x, w}, attrs, "reference"), want_nb, 1e-5)) << what << " no bias";
      EXPECT_TRUE(near(fused("FusedConv", {x, w}, attrs, "fast"), want_nb, 1e-4)) << what << " no bias";
    }
  }
}

TEST(FusedConv, DoubleRunsOnTheReference) {
  const ConvCase c = conv_cases()[0];
  Tensor x(DataType::Double, c.x), w(DataType::Double, c.w);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = std::sin(0.1 * i);
  for (int64_t i = 0; i < w.numel(); ++i) w.data<double>()[i] = std::cos(0.3 * i);
  auto attrs = conv_attrs(c);
  attrs.push_back(Attribute::make_string("activation", "Relu"));
  const Tensor want = onnx_op("Relu", {onnx_op("Conv", {x, w}, conv_attrs(c))});
  EXPECT_TRUE(near(fused("FusedConv", {x, w}, attrs, "fast"), want, 1e-12));
}

TEST(FusedConv, BadActivationIsBadInput) {
  const Tensor x = rnd({1, 2, 4, 4}, 1), w = rnd({2, 2, 1, 1}, 2);
  EXPECT_THROW(fused("FusedConv", {x, w}, {Attribute::make_string("activation", "Softsign")}, "fast"), Error);
  EXPECT_THROW(fused("FusedConv", {x, w},
                     {Attribute::make_string("activation", "Relu"), Attribute::make_floats("activation_params", {1.0f})},
                     "reference"),
               Error);
}

TEST(NhwcConv, FastAndReferenceMatchTransposedFusedConv) {
  uint32_t seed = 100;
  for (const auto& c : conv_cases()) {
    const int r = static_cast<int>(c.x.size());
    std::vector<int64_t> to_last{0}, to_first{0, r - 1};
    for (int i = 2; i < r; ++i) to_last.push_back(i);
    to_last.push_back(1);
    for (int i = 1; i < r - 1; ++i) to_first.push_back(i);
    const Tensor x = rnd(c.x, seed++), w = rnd(c.w, seed++), b = rnd({c.w[0]}, seed++);
    const Tensor conv = onnx_op("Conv", {x, w, b}, conv_attrs(c));
    const Tensor z = rnd(conv.shape(), seed++);
    const Tensor x_nhwc = transpose(x, to_last), z_nhwc = transpose(z, to_last);
    for (const auto& act : {act_cases()[1], act_cases()[2], act_cases()[9]}) {
      auto attrs = conv_attrs(c);
      for (auto& a : act_attrs(act)) attrs.push_back(a);
      const Tensor want = transpose(onnx_activation(act.name, act.params, onnx_op("Add", {conv, z})), to_last);
      const Tensor ref = fused("NhwcConv", {x_nhwc, w, b, z_nhwc}, attrs, "reference");
      EXPECT_TRUE(near(ref, want, 1e-5)) << c.what << " " << act.name;
      for (bool constant : {false, true})
        EXPECT_TRUE(near(fused("NhwcConv", {x_nhwc, w, b, z_nhwc}, attrs, "fast", {false, constant}), want, 1e-4))
            << c.what << " " << act.name << (constant ? " packed" : "");
    }
    (void)to_first;
  }
}

TEST(NhwcConvTranspose, ReferenceMatchesTransposedConvTranspose) {
  const Tensor x = rnd({2, 3, 4, 5}, 7), w = rnd({3, 2, 3, 3}, 8), b = rnd({2}, 9);
  std::vector<Attribute> attrs{Attribute::make_ints("strides", {2, 1}), Attribute::make_ints("pads", {1, 0, 0, 1}),
                               Attribute::make_ints("output_padding", {1, 0})};
  const Tensor want = transpose(
      onnx_activation("LeakyRelu", {0.2f}, onnx_op("ConvTranspose", {x, w, b}, attrs)), {0, 2, 3, 1});
  attrs.push_back(Attribute::make_string("activation", "LeakyRelu"));
  attrs.push_back(Attribute::make_floats("activation_params", {0.2f}));
  EXPECT_TRUE(near(fused("NhwcConvTranspose", {transpose(x, {0, 2, 3, 1}), w, b}, attrs, "reference"), want, 1e-5));
  EXPECT_TRUE(near(fused("NhwcConvTranspose", {transpose(x, {0, 2, 3, 1}), w, b}, attrs, ""), want, 1e-5));
}

TEST(FusedGemm, FastAndReferenceMatchGemmActivation) {
  uint32_t seed = 200;
  for (int64_t M : {1, 9}) {
    const int64_t K = 31, N = 35;
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (const Shape& cs : {Shape{N}, Shape{M, N}, Shape{M, 1}, Shape{}, Shape{1, N}}) {
          const Tensor a = rnd(ta ? Shape{K, M} : Shape{M, K}, seed++), b = rnd(tb ? Shape{N, K} : Shape{K, N}, seed++);
          const Tensor c = rnd(cs, seed++);
          std::vector<Attribute> gemm_attrs{Attribute::make_int("transA", ta), Attribute::make_int("transB", tb),
                                            Attribute::make_float("alpha", 0.7f), Attribute::make_float("beta", 1.3f)};
          const Tensor g = onnx_op("Gemm", {a, b, c}, gemm_attrs);
          for (const auto& act : act_cases()) {
            auto attrs = gemm_attrs;
            for (auto& x : act_attrs(act)) attrs.push_back(x);
            const std::string what = "M=" + std::to_string(M) + " tA=" + std::to_string(ta) + " tB=" +
                                     std::to_string(tb) + " C " + shape_str(cs) + " '" + act.name + "'";
            const Tensor want = onnx_activation(act.name, act.params, g);
            const Tensor ref = fused("FusedGemm", {a, b, c}, attrs, "reference");
            EXPECT_TRUE(near(ref, want, 1e-5)) << what;
            for (bool constant : {false, true})
              EXPECT_TRUE(near(fused("FusedGemm", {a, b, c}, attrs, "fast", {false, constant, constant}), ref, 1e-4))
                  << what << (constant ? " packed" : "");
          }
        }
  }
}

Tensor matmul_composition(const Tensor& a, const Tensor& b, const Tensor* bias, bool ta, bool tb, float alpha,
                          const ActCase& act) {
  auto swap_last = [](const Tensor& t) {
    std::vector<int64_t> p;
    for (int i = 0; i < t.rank(); ++i) p.push_back(i);
    std::swap(p[t.rank() - 1], p[t.rank() - 2]);
    return transpose(t, p);
  };
  Tensor y = onnx_op("MatMul", {ta && a.rank() >= 2 ? swap_last(a) : a, tb && b.rank() >= 2 ? swap_last(b) : b});
  y = onnx_op("Mul", {y, scalar(alpha)});
  if (bias) y = onnx_op("Add", {y, *bias});
  return onnx_activation(act.name, act.params, y);
}

TEST(FusedMatMul, FastAndReferenceMatchTransposeMatMulMulAddActivation) {
  struct Case {
    Shape a, b;  // as stored (before transposes)
    int ta, tb;
    int64_t n;   // bias length (0: none)
  };
  const std::vector<Case> cases = {
      {{3, 7, 33}, {33, 20}, 0, 0, 20},     {{2, 1, 9, 5}, {3, 9, 4}, 1, 0, 4},  {{2, 3, 5, 6}, {7, 6}, 0, 1, 7},
      {{4, 6, 3}, {4, 5, 6}, 1, 1, 0},      {{17}, {17, 40}, 0, 0, 40},          {{6, 17}, {17}, 0, 0, 0},
      {{1, 300}, {70, 300}, 0, 1, 70},      {{2, 1, 64}, {64, 1}, 0, 0, 1},
  };
  uint32_t seed = 300;
  for (const auto& c : cases) {
    const Tensor a = rnd(c.a, seed++), b = rnd(c.b, seed++);
    const Tensor bias = c.n ? rnd({c.n}, seed++) : Tensor();
    for (const auto& act : {act_cases()[0], act_cases()[1], act_cases()[8], act_cases()[9]}) {
      std::vector<Attribute> attrs{Attribute::make_int("transA", c.ta), Attribute::make_int("transB", c.tb),
                                   Attribute::make_float("alpha", 0.5f)};
      for (auto& x : act_attrs(act)) attrs.push_back(x);
      const std::string what = shape_str(c.a) + " x " + shape_str(c.b) + " tA=" + std::to_string(c.ta) +
                               " tB=" + std::to_string(c.tb) + " '" + act.name + "'";
      const Tensor want = matmul_composition(a, b, c.n ? &bias : nullptr, c.ta, c.tb, 0.5f, act);
      const std::vector<Tensor> ins = c.n ? std::vector<Tensor>{a, b, bias} : std::vector<Tensor>{a, b};
      const Tensor ref = fused("FusedMatMul", ins, attrs, "reference");
      EXPECT_TRUE(near(ref, want, 1e-5)) << what;
      for (bool constant : {false, true})
        EXPECT_TRUE(near(fused("FusedMatMul", ins, attrs, "fast", {false, constant, false}), ref, 1e-4))
            << what << (constant ? " packed" : "");
    }
  }
}

TEST(FusedMatMul, FullShapeBiasGoesThroughTheReference) {
  const Tensor a = rnd({2, 3, 4}, 1), b = rnd({4, 5}, 2), bias = rnd({2, 3, 5}, 3);
  const Tensor want = matmul_composition(a, b, &bias, false, false, 1.0f, act_cases()[0]);
  EXPECT_TRUE(near(fused("FusedMatMul", {a, b, bias}, {}, "fast"), want, 1e-5));
}

}  // namespace
}  // namespace fusor::test
