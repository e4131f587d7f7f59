// Conv / ConvTranspose: hand-checked cases, an independent 2-D loop over an explicitly padded
// input, and the adjoint identity <Conv(x), y> == <x, ConvTranspose(y)>.
#include <gtest/gtest.h>

#include <random>

#include "kernels/common/conv_params.h"
#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

Tensor ft(Shape s, std::vector<float> v) { return Tensor::from_vector<float>(std::move(s), v); }
std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

Tensor random_tensor(Shape s, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor t(DataType::Float, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

TEST(NnConv, HandChecked3x3WithPadding) {
  // 1x1x3x3 input 1..9, 2x2 ones kernel, pads 1 on top/left only, stride 1.
  Tensor x = ft({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = ft({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor b = ft({1}, {10});
  auto y = run_op("Conv", {&x, &w, &b}, {Attribute::make_ints("pads", {1, 1, 0, 0})});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(values(y[0]), (std::vector<float>{11, 13, 15, 15, 22, 26, 21, 34, 38}));
}

TEST(NnConv, AutoPadSameLowerAndUpper) {
  WindowAttrs a;
  a.auto_pad = AutoPad::SameUpper;
  a.strides = {2};
  ConvParams p = conv_params(a, {1, 1, 6}, {1, 1, 4});
  EXPECT_EQ(p.out, (Shape{3}));
  EXPECT_EQ(p.pad_begin, (Shape{1}));  // total 2*2+4-6 = 2
  EXPECT_EQ(p.pad_end, (Shape{1}));
  p = conv_params(a, {1, 1, 5}, {1, 1, 4});  // out 3, total 2*2+4-5 = 3
  EXPECT_EQ(p.pad_begin, (Shape{1}));
  EXPECT_EQ(p.pad_end, (Shape{2}));
  a.auto_pad = AutoPad::SameLower;
  p = conv_params(a, {1, 1, 5}, {1, 1, 4});
  EXPECT_EQ(p.pad_begin, (Shape{2}));
  EXPECT_EQ(p.pad_end, (Shape{1}));
  a.auto_pad = AutoPad::Valid;
  p = conv_params(a, {1, 1, 5}, {1, 1, 4});
  EXPECT_EQ(p.out, (Shape{1}));
}

TEST(NnConv, BadShapesThrow) {
  Tensor x = ft({1, 3, 4, 4}, std::vector<float>(48, 1));
  Tensor w = ft({2, 2, 3, 3}, std::vector<float>(36, 1));
  EXPECT_THROW(run_op("Conv", {&x, &w}), Error);  // 3 channels vs 2
  Tensor w2 = ft({2, 3, 5, 5}, std::vector<float>(150, 1));
  EXPECT_THROW(run_op("Conv", {&x, &w2}), Error);  // kernel larger than input
}

// Independent 2-D reference: copy into a zero-padded buffer, then plain loops.
std::vector<float> conv2d_padded(const Tensor& x, const Tensor& w, int64_t group, Shape strides, Shape dil, Shape pads) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t M = w.dim(0), KH = w.dim(2), KW = w.dim(3), cg = C / group, mg = M / group;
  const int64_t HP = H + pads[0] + pads[2], WP = W + pads[1] + pads[3];
  std::vector<float> xp(N * C * HP * WP, 0.f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t ww = 0; ww < W; ++ww)
          xp[((n * C + c) * HP + h + pads[0]) * WP + ww + pads[1]] = x.data<float>()[((n * C + c) * H + h) * W + ww];
  const int64_t OH = (HP - (KH - 1) * dil[0] - 1) / strides[0] + 1, OW = (WP - (KW - 1) * dil[1] - 1) / strides[1] + 1;
  std::vector<float> y(N * M * OH * OW);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = 0;
          const int64_t g = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw)
                s += double(xp[((n * C + g * cg + c) * HP + oh * strides[0] + kh * dil[0]) * WP + ow * strides[1] + kw * dil[1]]) *
                     w.data<float>()[((m * cg + c) * KH + kh) * KW + kw];
          y[((n * M + m) * OH + oh) * OW + ow] = static_cast<float>(s);
        }
  return y;
}

TEST(NnConv, RandomGroupsStridesDilationsAsymmetricPads) {
  std::mt19937 rng(11);
  struct Case { int64_t N, C, H, W, M, K, group; Shape s, d, pads; };
  const Case cases[] = {
      {2, 4, 7, 6, 6, 3, 2, {2, 1}, {1, 2}, {1, 0, 2, 1}},
      {1, 3, 5, 5, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}},  // depthwise
      {1, 5, 9, 4, 2, 1, 1, {3, 2}, {1, 1}, {0, 0, 0, 0}},  // 1x1 strided
      {3, 2, 4, 8, 4, 2, 1, {1, 3}, {2, 1}, {0, 2, 1, 0}},
  };
  for (const Case& c : cases) {
    Tensor x = random_tensor({c.N, c.C, c.H, c.W}, rng);
    Tensor w = random_tensor({c.M, c.C / c.group, c.K, c.K}, rng);
    auto y = run_op("Conv", {&x, &w},
                    {Attribute::make_int("group", c.group), Attribute::make_ints("strides", c.s),
                     Attribute::make_ints("dilations", c.d), Attribute::make_ints("pads", c.pads)});
    std::vector<float> want = conv2d_padded(x, w, c.group, c.s, c.d, c.pads);
    ASSERT_EQ(static_cast<size_t>(y[0].numel()), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[0].data<float>()[i], want[i], 1e-5) << i;
  }
}

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (int64_t i = 0; i < a.numel(); ++i) s += double(a.data<float>()[i]) * b.data<float>()[i];
  return s;
}

// ConvTranspose with the same W, strides, pads and dilations is the adjoint of Conv.
TEST(NnConvTranspose, AdjointOfConv) {
  std::mt19937 rng(5);
  struct Case { Shape x; int64_t M, group; Shape k, s, d, pads; };
  const Case cases[] = {
      {{2, 4, 7, 6}, 6, 2, {3, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}},
      {{1, 3, 9}, 2, 1, {4}, {3}, {1}, {2, 1}},
      {{1, 2, 4, 5, 3}, 4, 2, {2, 3, 1}, {1, 2, 1}, {1, 1, 2}, {0, 1, 0, 1, 0, 1}},
  };
  for (const Case& c : cases) {
    const int nd = static_cast<int>(c.k.size());
    Shape wshape{c.M, c.x[1] / c.group};
    wshape.insert(wshape.end(), c.k.begin(), c.k.end());
    Tensor x = random_tensor(c.x, rng);
    Tensor w = random_tensor(wshape, rng);
    std::vector<Attribute> attrs{Attribute::make_int("group", c.group), Attribute::make_ints("strides", c.s),
                                 Attribute::make_ints("dilations", c.d), Attribute::make_ints("pads", c.pads)};
    auto y = run_op("Conv", {&x, &w}, attrs);
    // output_padding recovers the input size lost to the floor in Conv's output size.
    Shape out_pad(nd);
    for (int i = 0; i < nd; ++i) {
      const int64_t ek = (c.k[i] - 1) * c.d[i] + 1;
      out_pad[i] = (c.x[2 + i] + c.pads[i] + c.pads[nd + i] - ek) % c.s[i];
    }
    attrs.push_back(Attribute::make_ints("output_padding", out_pad));
    Tensor r = random_tensor(y[0].shape(), rng);
    auto xt = run_op("ConvTranspose", {&r, &w}, attrs);
    ASSERT_EQ(xt[0].shape(), x.shape());
    EXPECT_NEAR(dot(y[0], r), dot(x, xt[0]), 1e-4);
  }
}

TEST(NnConvTranspose, HandChecked1d) {
  // x = [1, 2], w = [1, 1, 1], stride 2: y = [1, 1, 1+2, 2, 2], plus bias 1.
  Tensor x = ft({1, 1, 2}, {1, 2});
  Tensor w = ft({1, 1, 3}, {1, 1, 1});
  Tensor b = ft({1}, {1});
  auto y = run_op("ConvTranspose", {&x, &w, &b}, {Attribute::make_ints("strides", {2})});
  EXPECT_EQ(values(y[0]), (std::vector<float>{2, 2, 4, 3, 3}));
  // output_shape 6 with NOTSET: total pad = 5 - 6 = -1, the extra element appears at the end.
  auto y2 = run_op("ConvTranspose", {&x, &w}, {Attribute::make_ints("strides", {2}), Attribute::make_ints("output_shape", {6})});
  EXPECT_EQ(values(y2[0]), (std::vector<float>{1, 1, 3, 2, 2, 0}));
}

}  // namespace
}  // namespace fusor::test
