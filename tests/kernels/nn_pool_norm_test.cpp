// Pools, normalizations and the softmax family on hand-checked inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

Tensor ft(Shape s, std::vector<float> v) { return Tensor::from_vector<float>(std::move(s), v); }
std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

void expect_near(const Tensor& t, const std::vector<float>& want, double tol = 1e-5) {
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[i], tol) << "element " << i;
}

TEST(NnPool, MaxPoolWithIndicesAndStorageOrder) {
  Tensor x = ft({1, 1, 3, 3}, {1, 9, 2, 3, 4, 8, 7, 5, 6});
  auto y = run_op("MaxPool", {&x}, {Attribute::make_ints("kernel_shape", {2, 2})}, 2);
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(values(y[0]), (std::vector<float>{9, 9, 7, 8}));
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{1, 1, 6, 5}));
  auto yc = run_op("MaxPool", {&x}, {Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_int("storage_order", 1)}, 2);
  // Column-major offsets: (0,1) -> 3, (2,0) -> 2, (1,2) -> 7.
  EXPECT_EQ(yc[1].to_int64_vector(), (std::vector<int64_t>{3, 3, 2, 7}));
}

TEST(NnPool, MaxPoolCeilModeAndPadsIgnorePadding) {
  Tensor x = ft({1, 1, 1, 5}, {-5, -4, -3, -2, -1});
  auto y = run_op("MaxPool", {&x}, {Attribute::make_ints("kernel_shape", {1, 2}), Attribute::make_ints("strides", {1, 2}),
                                    Attribute::make_int("ceil_mode", 1)});
  EXPECT_EQ(values(y[0]), (std::vector<float>{-4, -2, -1}));
  auto yp = run_op("MaxPool", {&x}, {Attribute::make_ints("kernel_shape", {1, 3}), Attribute::make_ints("pads", {0, 1, 0, 1})});
  EXPECT_EQ(values(yp[0]), (std::vector<float>{-4, -3, -2, -1, -1}));  // pads never win, even over negatives
}

TEST(NnPool, AveragePoolCountIncludePad) {
  Tensor x = ft({1, 1, 2, 2}, {1, 2, 3, 4});
  std::vector<Attribute> a{Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_ints("pads", {1, 1, 0, 0})};
  auto excl = run_op("AveragePool", {&x}, a);
  expect_near(excl[0], {1, 1.5f, 2, 2.5f});
  a.push_back(Attribute::make_int("count_include_pad", 1));
  auto incl = run_op("AveragePool", {&x}, a);
  expect_near(incl[0], {0.25f, 0.75f, 1, 2.5f});
}

TEST(NnPool, GlobalAndLp) {
  Tensor x = ft({1, 2, 2, 1}, {3, 4, -1, 1});
  expect_near(run_op("GlobalAveragePool", {&x})[0], {3.5f, 0});
  expect_near(run_op("GlobalMaxPool", {&x})[0], {4, 1});
  expect_near(run_op("GlobalLpPool", {&x})[0], {5, std::sqrt(2.0f)});
  EXPECT_EQ(run_op("GlobalLpPool", {&x})[0].shape(), (Shape{1, 2, 1, 1}));
  auto lp = run_op("LpPool", {&x}, {Attribute::make_ints("kernel_shape", {2, 1}), Attribute::make_int("p", 1)});
  expect_near(lp[0], {7, 2});
}

TEST(NnNorm, BatchNormInference) {
  Tensor x = ft({1, 2, 2}, {1, 2, 3, 4});
  Tensor s = ft({2}, {2, 1}), b = ft({2}, {0, 1}), m = ft({2}, {1, 3}), v = ft({2}, {4, 0.25f});
  auto y = run_op("BatchNormalization", {&x, &s, &b, &m, &v}, {Attribute::make_float("epsilon", 0)});
  expect_near(y[0], {0, 1, 1, 3});
}

TEST(NnNorm, InstanceAndLayerNorm) {
  Tensor x = ft({1, 2, 2}, {1, 3, 2, 2});
  Tensor s = ft({2}, {1, 1}), b = ft({2}, {0, 5});
  auto y = run_op("InstanceNormalization", {&x, &s, &b});
  expect_near(y[0], {-1, 1, 5, 5}, 1e-4);
  Tensor sc = ft({2}, {1, 2}), bi = ft({2}, {0, 1});
  auto ln = run_op("LayerNormalization", {&x, &sc, &bi}, {}, 3);
  expect_near(ln[0], {-1, 3, 0, 1}, 1e-4);
  EXPECT_EQ(ln[1].shape(), (Shape{1, 2, 1}));
  expect_near(ln[1], {2, 2});
  EXPECT_NEAR(ln[2].data<float>()[0], 1, 1e-4);
  EXPECT_NEAR(ln[2].data<float>()[1], 1 / std::sqrt(1e-5), 1e-2);  // zero variance: 1/sqrt(epsilon)
}

TEST(NnNorm, LrnAndMvn) {
  Tensor x = ft({1, 3, 1, 1}, {1, 2, 3});
  auto y = run_op("LRN", {&x}, {Attribute::make_int("size", 3), Attribute::make_float("alpha", 3),
                                Attribute::make_float("beta", 1), Attribute::make_float("bias", 1)});
  // channel 0 window {0,1}: 1/(1 + 5) ; channel 1 {0,1,2}: 2/(1+14); channel 2 {1,2}: 3/(1+13)
  expect_near(y[0], {1.f / 6, 2.f / 15, 3.f / 14});
  Tensor z = ft({1, 2, 1, 2}, {1, 3, 5, 5});
  auto mvn = run_op("MeanVarianceNormalization", {&z});
  expect_near(mvn[0], {-1, 1, 0, 0}, 1e-6);
}

TEST(NnSoftmax, AxisSemanticsByOpset) {
  Tensor x = ft({2, 2}, {0, 0, 1, 1});
  // opset 13: along axis 0 (each column): softmax([0,1]).
  auto y13 = run_op("Softmax", {&x}, {Attribute::make_int("axis", 0)}, 1, 13);
  const float e = 1.f / (1.f + std::exp(1.f));
  expect_near(y13[0], {e, e, 1 - e, 1 - e});
  // opset 11 with axis 0: the whole tensor is one row of 4.
  auto y11 = run_op("Softmax", {&x}, {Attribute::make_int("axis", 0)}, 1, 11);
  const float d = 2 + 2 * std::exp(1.f);
  expect_near(y11[0], {1 / d, 1 / d, std::exp(1.f) / d, std::exp(1.f) / d});
  auto ls = run_op("LogSoftmax", {&x}, {}, 1, 13);
  expect_near(ls[0], {-std::log(2.f), -std::log(2.f), -std::log(2.f), -std::log(2.f)});
  Tensor h = ft({2, 3}, {1, 3, 3, 5, 0, 5});
  expect_near(run_op("Hardmax", {&h}, {}, 1, 13)[0], {0, 1, 0, 1, 0, 0});
  expect_near(run_op("Hardmax", {&h}, {Attribute::make_int("axis", 0)}, 1, 11)[0], {0, 0, 0, 1, 0, 0});
  expect_near(run_op("Hardmax", {&h}, {Attribute::make_int("axis", 0)}, 1, 13)[0], {0, 1, 0, 1, 0, 1});
}

// Brute-force 2-D pooling: every tap tested against the input and padded extents.
TEST(NnPool, RandomAgainstBruteForce) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-3, 3);
  struct Case { int64_t H, W; Shape k, s, d, pads; int ceil; };
  const Case cases[] = {{7, 9, {3, 2}, {2, 3}, {1, 2}, {1, 0, 2, 1}, 1}, {5, 5, {2, 2}, {2, 2}, {2, 1}, {0, 1, 1, 0}, 0},
                        {6, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, {8, 3, {4, 1}, {3, 1}, {1, 1}, {2, 0, 2, 0}, 1}};
  for (const Case& c : cases) {
    Tensor x(DataType::Float, {2, 3, c.H, c.W});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = u(rng);
    std::vector<Attribute> a{Attribute::make_ints("kernel_shape", c.k), Attribute::make_ints("strides", c.s),
                             Attribute::make_ints("pads", c.pads), Attribute::make_int("ceil_mode", c.ceil)};
    auto avg = run_op("AveragePool", {&x}, {a[0], a[1], a[2], a[3], Attribute::make_int("count_include_pad", 1)}, 1, 17);
    a.push_back(Attribute::make_ints("dilations", c.d));
    auto mx = run_op("MaxPool", {&x}, a, 1, 17);
    auto out_dim = [&](int64_t in, int i, int64_t dil) {
      const int64_t span = in + c.pads[i] + c.pads[i + 2] - ((c.k[i] - 1) * dil + 1);
      int64_t o = (c.ceil ? (span + c.s[i] - 1) / c.s[i] : span / c.s[i]) + 1;
      if (c.ceil && (o - 1) * c.s[i] >= in + c.pads[i]) --o;
      return o;
    };
    const int64_t MH = out_dim(c.H, 0, c.d[0]), MW = out_dim(c.W, 1, c.d[1]);
    const int64_t AH = out_dim(c.H, 0, 1), AW = out_dim(c.W, 1, 1);
    ASSERT_EQ(mx[0].shape(), (Shape{2, 3, MH, MW}));
    ASSERT_EQ(avg[0].shape(), (Shape{2, 3, AH, AW}));
    for (int64_t p = 0; p < 6; ++p) {
      const float* xp = x.data<float>() + p * c.H * c.W;
      for (int64_t oh = 0; oh < MH; ++oh)
        for (int64_t ow = 0; ow < MW; ++ow) {
          float best = -1e30f;
          for (int64_t kh = 0; kh < c.k[0]; ++kh)
            for (int64_t kw = 0; kw < c.k[1]; ++kw) {
              const int64_t h = oh * c.s[0] - c.pads[0] + kh * c.d[0], w = ow * c.s[1] - c.pads[1] + kw * c.d[1];
              if (h >= 0 && h < c.H && w >= 0 && w < c.W) best = std::max(best, xp[h * c.W + w]);
            }
          EXPECT_EQ(mx[0].data<float>()[(p * MH + oh) * MW + ow], best);
        }
      for (int64_t oh = 0; oh < AH; ++oh)
        for (int64_t ow = 0; ow < AW; ++ow) {
          double sum = 0;
          int count = 0;
          for (int64_t kh = 0; kh < c.k[0]; ++kh)
            for (int64_t kw = 0; kw < c.k[1]; ++kw) {
              const int64_t h = oh * c.s[0] - c.pads[0] + kh, w = ow * c.s[1] - c.pads[1] + kw;
              if (h >= -c.pads[0] && h < c.H + c.pads[2] && w >= -c.pads[1] && w < c.W + c.pads[3]) ++count;
              if (h >= 0 && h < c.H && w >= 0 && w < c.W) sum += xp[h * c.W + w];
            }
          EXPECT_NEAR(avg[0].data<float>()[(p * AH + oh) * AW + ow], sum / count, 1e-5);
        }
    }
  }
}

TEST(NnRoiAlign, AvgAndMaxOfOneSample) {
  Tensor x = ft({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor rois = ft({1, 4}, {0, 0, 1, 1});
  Tensor b = Tensor::from_vector<int64_t>({1}, {0});
  std::vector<Attribute> a{Attribute::make_int("output_height", 1), Attribute::make_int("output_width", 1),
                           Attribute::make_int("sampling_ratio", 1)};
  // opset 10: output_half_pixel, the sample sits at (0.5, 0.5).
  expect_near(run_op("RoiAlign", {&x, &rois, &b}, a, 1, 10)[0], {2.5f});
  a.push_back(Attribute::make_string("mode", "max"));
  expect_near(run_op("RoiAlign", {&x, &rois, &b}, a, 1, 10)[0], {1.0f});  // max of 0.25*1, 0.25*2, 0.25*3, 0.25*4
}

TEST(NnMaxUnpool, ScattersByIndex) {
  Tensor x = ft({1, 1, 1, 2}, {5, 6});
  Tensor idx = Tensor::from_vector<int64_t>({1, 1, 1, 2}, {1, 2});
  auto y = run_op("MaxUnpool", {&x, &idx}, {Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_ints("strides", {2, 2})}, 1, 11);
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 2, 4}));
  EXPECT_EQ(values(y[0]), (std::vector<float>{0, 5, 6, 0, 0, 0, 0, 0}));
}

// Kernels that declare (X, Y) in-place give the same result when Y overwrites X's buffer.
TEST(NnInPlace, DeclaredPairsAreSafe) {
  auto make_x = [] {
    Tensor x(DataType::Float, {2, 3, 4});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.7f * i) * (1 + i % 5);
    return x;
  };
  Tensor s3 = ft({3}, {1, 2, 0.5f}), b3 = ft({3}, {0.1f, -0.2f, 0.3f}), m3 = ft({3}, {0, 1, -1}), v3 = ft({3}, {1, 2, 3});
  Tensor s4 = ft({4}, {1, 2, 3, 4}), b4 = ft({4}, {0, 1, 0, 1});
  struct Case { std::string op; std::vector<const Tensor*> extra; std::vector<Attribute> attrs; int outs; };
  const std::vector<Case> cases = {
      {"BatchNormalization", {&s3, &b3, &m3, &v3}, {}, 1},
      {"InstanceNormalization", {&s3, &b3}, {}, 1},
      {"LayerNormalization", {&s4, &b4}, {}, 1},
      {"MeanVarianceNormalization", {}, {Attribute::make_ints("axes", {0, 2})}, 1},
      {"Softmax", {}, {Attribute::make_int("axis", 1)}, 1},
      {"LogSoftmax", {}, {}, 1},
      {"Hardmax", {}, {Attribute::make_int("axis", 0)}, 1},
  };
  for (const Case& c : cases) {
    Tensor x = make_x();
    std::vector<const Tensor*> in{&x};
    in.insert(in.end(), c.extra.begin(), c.extra.end());
    const std::vector<float> want = values(run_op(c.op, in, c.attrs, c.outs)[0]);
    auto got = run_op(c.op, in, c.attrs, c.outs, 17, /*inplace=*/true);
    EXPECT_EQ(got[0].raw(), x.raw()) << c.op;
    EXPECT_EQ(values(got[0]), want) << c.op;
  }
}

}  // namespace
}  // namespace fusor::test
