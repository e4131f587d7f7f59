// Einsum, quantization, integer matmul/conv and Det on hand-checked cases and against the float
// kernels they must agree with.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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

std::vector<Tensor> einsum(const std::string& eq, const std::vector<const Tensor*>& in) {
  return run_op("Einsum", in, {Attribute::make_string("equation", eq)}, 1, 12);
}

void expect_all_near(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.as_double(i), b.as_double(i), tol) << i;
}

TEST(MiscEinsum, HandChecked) {
  Tensor m = ft({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values(einsum("ii", {&m})[0]), (std::vector<float>{5}));        // trace (implicit: scalar)
  EXPECT_EQ(values(einsum("ii->i", {&m})[0]), (std::vector<float>{1, 4}));  // diagonal
  EXPECT_EQ(values(einsum("ij->ji", {&m})[0]), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(values(einsum("ji", {&m})[0]), (std::vector<float>{1, 3, 2, 4}));  // implicit output is sorted: "ij"
  EXPECT_EQ(values(einsum("ij->", {&m})[0]), (std::vector<float>{10}));
  Tensor u = ft({2}, {1, 2}), v = ft({3}, {1, 10, 100});
  auto outer = einsum("i,j->ij", {&u, &v});
  EXPECT_EQ(outer[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values(outer[0]), (std::vector<float>{1, 10, 100, 2, 20, 200}));
  EXPECT_THROW(einsum("ij,jk->ik", {&m, &v}), Error);  // j: 2 vs 3
}

TEST(MiscEinsum, BatchedMatMulWithEllipsisBroadcastMatchesMatMul) {
  std::mt19937 rng(3);
  Tensor a = random_tensor({2, 1, 3, 4}, rng), b = random_tensor({5, 4, 2}, rng);
  auto e = einsum("...ij,...jk->...ik", {&a, &b});
  auto m = run_op("MatMul", {&a, &b});
  expect_all_near(e[0], m[0], 1e-5);
  Tensor c = random_tensor({3, 4, 5}, rng), d = random_tensor({3, 5, 2}, rng);
  expect_all_near(einsum("bij,bjk->bik", {&c, &d})[0], run_op("MatMul", {&c, &d})[0], 1e-5);
}

TEST(MiscQuant, QuantizeRoundsHalfToEvenAndSaturates) {
  Tensor x = ft({6}, {0.5f, 1.5f, 2.5f, -0.5f, 300, -300});
  Tensor s = ft({}, {1});
  Tensor zp_u8 = Tensor::scalar<uint8_t>(10);
  auto y = run_op("QuantizeLinear", {&x, &s, &zp_u8}, {}, 1, 13);
  EXPECT_EQ(y[0].dtype(), DataType::UInt8);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{10, 12, 12, 10, 255, 0}));
  Tensor zp_i8 = Tensor::scalar<int8_t>(-1);
  auto yi = run_op("QuantizeLinear", {&x, &s, &zp_i8}, {}, 1, 13);
  EXPECT_EQ(yi[0].dtype(), DataType::Int8);
  EXPECT_EQ(yi[0].to_int64_vector(), (std::vector<int64_t>{-1, 1, 1, -1, 127, -128}));
  auto y_default = run_op("QuantizeLinear", {&x, &s}, {}, 1, 13);
  EXPECT_EQ(y_default[0].dtype(), DataType::UInt8);  // no zero point: uint8, zero point 0
}

TEST(MiscQuant, PerAxisQuantizeDequantizeRoundTrip) {
  Tensor x = ft({2, 3}, {1, 2, 3, -4, 5, -6});
  Tensor s = ft({3}, {0.5f, 1, 2});
  Tensor zp = Tensor::from_vector<int8_t>({3}, {0, 1, -1});
  auto q = run_op("QuantizeLinear", {&x, &s, &zp}, {Attribute::make_int("axis", 1)}, 1, 13);
  EXPECT_EQ(q[0].to_int64_vector(), (std::vector<int64_t>{2, 3, 1, -8, 6, -4}));  // 1.5 -> 2, -3 -> -3-1
  auto d = run_op("DequantizeLinear", {&q[0], &s, &zp}, {Attribute::make_int("axis", 1)}, 1, 13);
  EXPECT_EQ(values(d[0]), (std::vector<float>{1, 2, 4, -4, 5, -6}));
  Tensor bad_s = ft({2}, {1, 1});
  EXPECT_THROW(run_op("QuantizeLinear", {&x, &bad_s}, {Attribute::make_int("axis", 1)}, 1, 13), Error);
}

TEST(MiscInteger, MatMulIntegerPerRowZeroPoint) {
  Tensor a = Tensor::from_vector<uint8_t>({2, 2}, {10, 12, 20, 21});
  Tensor b = Tensor::from_vector<int8_t>({2, 2}, {1, -1, 2, 3});
  Tensor azp = Tensor::from_vector<uint8_t>({2}, {10, 20});
  auto y = run_op("MatMulInteger", {&a, &b, &azp}, {}, 1, 10);
  EXPECT_EQ(y[0].dtype(), DataType::Int32);
  // (a - zp) = [[0, 2], [0, 1]]
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{4, 6, 2, 3}));
}

TEST(MiscInteger, ConvIntegerAndQLinearConvAgreeWithFloatConv) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> ux(0, 255), uw(-100, 100);
  const Shape xs{1, 4, 5, 5}, ws{6, 2, 3, 3};
  Tensor x(DataType::UInt8, xs), w(DataType::Int8, ws);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(ux(rng));
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(uw(rng));
  Tensor xzp = Tensor::scalar<uint8_t>(128), wzp = Tensor::scalar<int8_t>(3);
  std::vector<Attribute> attrs{Attribute::make_int("group", 2), Attribute::make_ints("pads", {1, 0, 0, 1}),
                               Attribute::make_ints("strides", {2, 1})};
  auto yi = run_op("ConvInteger", {&x, &w, &xzp, &wzp}, attrs, 1, 10);
  // Float conv of the shifted values. Pads are zeros in the shifted domain, i.e. the zero point.
  Tensor xf(DataType::Float, xs), wf(DataType::Float, ws);
  for (int64_t i = 0; i < x.numel(); ++i) xf.data<float>()[i] = x.data<uint8_t>()[i] - 128.f;
  for (int64_t i = 0; i < w.numel(); ++i) wf.data<float>()[i] = w.data<int8_t>()[i] - 3.f;
  auto yf = run_op("Conv", {&xf, &wf}, attrs);
  expect_all_near(yi[0], yf[0], 0);
  // QLinearConv = requantized float conv of the dequantized operands.
  Tensor xsc = ft({}, {0.02f}), wsc = ft({6}, {0.01f, 0.02f, 0.03f, 0.01f, 0.02f, 0.03f}), ysc = ft({}, {0.5f});
  Tensor yzp = Tensor::scalar<uint8_t>(100);
  Tensor wzp6 = Tensor::from_vector<int8_t>({6}, {3, 3, 3, 3, 3, 3});
  Tensor bias = Tensor::from_vector<int32_t>({6}, {100, -200, 0, 5, 7, 9});
  auto yq = run_op("QLinearConv", {&x, &xsc, &xzp, &w, &wsc, &wzp6, &ysc, &yzp, &bias}, attrs, 1, 10);
  ASSERT_EQ(yq[0].dtype(), DataType::UInt8);
  const int64_t os = yf[0].numel() / 6;
  for (int64_t i = 0; i < yf[0].numel(); ++i) {
    const int64_t m = i / os;
    const double real = (yf[0].data<float>()[i] + bias.data<int32_t>()[m]) * 0.02 * wsc.data<float>()[m] / 0.5;
    const double want = std::clamp(std::nearbyint(real) + 100.0, 0.0, 255.0);
    EXPECT_NEAR(yq[0].as_double(i), want, 1.0) << i;
  }
}

TEST(MiscInteger, QLinearMatMulRequantizes) {
  Tensor a = Tensor::from_vector<uint8_t>({1, 2}, {130, 140});
  Tensor b = Tensor::from_vector<uint8_t>({2, 1}, {110, 90});
  Tensor as = ft({}, {0.1f}), bs = ft({}, {0.5f}), ys = ft({}, {0.25f});
  Tensor azp = Tensor::scalar<uint8_t>(128), bzp = Tensor::scalar<uint8_t>(100), yzp = Tensor::scalar<uint8_t>(50);
  auto y = run_op("QLinearMatMul", {&a, &as, &azp, &b, &bs, &bzp, &ys, &yzp}, {}, 1, 10);
  // (2 * 10 + 12 * -10) * 0.05 / 0.25 = -20 -> 30
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{30}));
}

TEST(MiscDet, KnownDeterminants) {
  Tensor m = ft({2, 3, 3}, {2, 0, 0, 0, 3, 0, 0, 0, 4,  // diag: 24
                            0, 1, 0, 1, 0, 0, 0, 0, 1});  // one swap: -1
  auto d = run_op("Det", {&m}, {}, 1, 11);
  EXPECT_EQ(d[0].shape(), (Shape{2}));
  EXPECT_NEAR(d[0].data<float>()[0], 24, 1e-5);
  EXPECT_NEAR(d[0].data<float>()[1], -1, 1e-6);
  Tensor singular = ft({2, 2}, {1, 2, 2, 4});
  EXPECT_NEAR(run_op("Det", {&singular}, {}, 1, 11)[0].data<float>()[0], 0, 1e-6);
}

}  // namespace
}  // namespace fusor::test
