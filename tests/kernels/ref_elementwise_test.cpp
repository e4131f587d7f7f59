// Hand-checked cases for the elementwise reference kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

// This file's checks are tighter than the harness's default.
void expect_close(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) { expect_near(t, want, tol); }

TEST(RefElementwise, AddBroadcastsBothWays) {
  Tensor a = Tensor::from_vector<float>({2, 1}, {1, 2});
  Tensor b = Tensor::from_vector<float>({3}, {10, 20, 30});
  auto y = run_op("Add", {&a, &b});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y[0]), (std::vector<double>{11, 21, 31, 12, 22, 32}));
}

TEST(RefElementwise, SubMulDivOnInts) {
  Tensor a = Tensor::from_vector<int64_t>({3}, {7, -7, 9});
  Tensor b = Tensor::from_vector<int64_t>({3}, {2, 2, -3});
  EXPECT_EQ(values(run_op("Sub", {&a, &b})[0]), (std::vector<double>{5, -9, 12}));
  EXPECT_EQ(values(run_op("Mul", {&a, &b})[0]), (std::vector<double>{14, -14, -27}));
  EXPECT_EQ(values(run_op("Div", {&a, &b})[0]), (std::vector<double>{3, -3, -3}));  // truncation
  Tensor z = Tensor::from_vector<int64_t>({3}, {1, 0, 1});
  EXPECT_THROW(run_op("Div", {&a, &z}), Error);  // integer division by zero is an error, not a crash
}

TEST(RefElementwise, IntegerOverflowWrapsAndCastSaturates) {
  Tensor a = Tensor::from_vector<int32_t>({2}, {2147483647, -2147483647 - 1});
  Tensor one = Tensor::from_vector<int32_t>({1}, {1});
  EXPECT_EQ(values(run_op("Add", {&a, &one})[0]), (std::vector<double>{-2147483648.0, -2147483647.0}));
  EXPECT_EQ(values(run_op("Neg", {&a})[0]), (std::vector<double>{-2147483647.0, -2147483648.0}));
  Tensor f = Tensor::from_vector<float>({3}, {std::nanf(""), 1e20f, -1e20f});
  auto c = run_op("Cast", {&f}, {Attribute::make_int("to", static_cast<int64_t>(DataType::Int32))});
  EXPECT_EQ(values(c[0]), (std::vector<double>{0, 2147483647.0, -2147483648.0}));
}

TEST(RefElementwise, MixedTypesAreRejected) {
  Tensor a = Tensor::from_vector<float>({1}, {1});
  Tensor b = Tensor::from_vector<int64_t>({1}, {1});
  EXPECT_THROW(run_op("Add", {&a, &b}), Error);
}

TEST(RefElementwise, ModSignConventions) {
  Tensor a = Tensor::from_vector<int32_t>({4}, {-4, 7, 5, -5});
  Tensor b = Tensor::from_vector<int32_t>({4}, {3, -3, 3, -3});
  EXPECT_EQ(values(run_op("Mod", {&a, &b})[0]), (std::vector<double>{2, -2, 2, -2}));  // sign of divisor
  auto f = run_op("Mod", {&a, &b}, {Attribute::make_int("fmod", 1)});
  EXPECT_EQ(values(f[0]), (std::vector<double>{-1, 1, 2, -2}));  // sign of dividend
}

TEST(RefElementwise, PowWithIntegerExponent) {
  Tensor a = Tensor::from_vector<float>({3}, {2, 3, 4});
  Tensor b = Tensor::from_vector<int64_t>({1}, {2});
  auto y = run_op("Pow", {&a, &b});
  EXPECT_EQ(y[0].dtype(), DataType::Float);
  expect_close(y[0], {4, 9, 16});
}

TEST(RefElementwise, Activations) {
  Tensor x = Tensor::from_vector<float>({4}, {-2, -0.5f, 0, 3});
  expect_close(run_op("Relu", {&x})[0], {0, 0, 0, 3});
  expect_close(run_op("LeakyRelu", {&x}, {Attribute::make_float("alpha", 0.1f)})[0], {-0.2, -0.05, 0, 3});
  expect_close(run_op("Sigmoid", {&x})[0], {1 / (1 + std::exp(2.0)), 1 / (1 + std::exp(0.5)), 0.5, 1 / (1 + std::exp(-3.0))});
  expect_close(run_op("HardSigmoid", {&x})[0], {0.1, 0.4, 0.5, 1});
  expect_close(run_op("HardSwish", {&x})[0], {-2 * (1.0 / 6), -0.5 * (2.5 / 6), 0, 3});
  expect_close(run_op("Elu", {&x})[0], {std::exp(-2.0) - 1, std::exp(-0.5) - 1, 0, 3});
  expect_close(run_op("Softsign", {&x})[0], {-2.0 / 3, -0.5 / 1.5, 0, 0.75});
  expect_close(run_op("Softplus", {&x})[0], {std::log1p(std::exp(-2.0)), std::log1p(std::exp(-0.5)), std::log(2.0), std::log1p(std::exp(3.0))}, 1e-5);
  expect_close(run_op("ThresholdedRelu", {&x})[0], {0, 0, 0, 3});
  expect_close(run_op("Shrink", {&x}, {Attribute::make_float("lambd", 1.0f), Attribute::make_float("bias", 0.5f)})[0], {-1.5, 0, 0, 2.5});
  expect_close(run_op("Celu", {&x})[0], {std::exp(-2.0) - 1, std::exp(-0.5) - 1, 0, 3});
}

TEST(RefElementwise, RoundIsHalfToEven) {
  Tensor x = Tensor::from_vector<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f});
  expect_close(run_op("Round", {&x})[0], {0, 2, 2, 0, -2, 3});
}

TEST(RefElementwise, ClipAttributeAndInputForms) {
  Tensor x = Tensor::from_vector<float>({4}, {-5, -1, 1, 5});
  auto old = run_op("Clip", {&x}, {Attribute::make_float("min", -2), Attribute::make_float("max", 2)}, 1, 6);
  expect_close(old[0], {-2, -1, 1, 2});
  Tensor lo = Tensor::scalar<float>(0);
  auto only_min = run_op("Clip", {&x, &lo, nullptr}, {}, 1, 13);
  expect_close(only_min[0], {0, 0, 1, 5});
  Tensor xi = Tensor::from_vector<int32_t>({3}, {-9, 4, 9});
  Tensor hi = Tensor::scalar<int32_t>(5);
  EXPECT_EQ(values(run_op("Clip", {&xi, nullptr, &hi}, {}, 1, 13)[0]), (std::vector<double>{-9, 4, 5}));
}

TEST(RefElementwise, ComparisonsAndLogic) {
  Tensor a = Tensor::from_vector<int64_t>({3}, {1, 2, 3});
  Tensor b = Tensor::from_vector<int64_t>({1}, {2});
  auto eq = run_op("Equal", {&a, &b});
  EXPECT_EQ(eq[0].dtype(), DataType::Bool);
  EXPECT_EQ(values(eq[0]), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(values(run_op("Less", {&a, &b})[0]), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(values(run_op("GreaterOrEqual", {&a, &b})[0]), (std::vector<double>{0, 1, 1}));
  Tensor p = Tensor::from_vector<bool>({4}, {true, true, false, false});
  Tensor q = Tensor::from_vector<bool>({4}, {true, false, true, false});
  EXPECT_EQ(values(run_op("And", {&p, &q})[0]), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(run_op("Or", {&p, &q})[0]), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(values(run_op("Xor", {&p, &q})[0]), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(values(run_op("Not", {&p})[0]), (std::vector<double>{0, 0, 1, 1}));
}

TEST(RefElementwise, WhereBroadcastsAllThree) {
  Tensor c = Tensor::from_vector<bool>({2, 1}, {true, false});
  Tensor x = Tensor::from_vector<int64_t>({2}, {1, 2});
  Tensor y = Tensor::scalar<int64_t>(9);
  auto out = run_op("Where", {&c, &x, &y});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 2, 9, 9}));
}

TEST(RefElementwise, VariadicMinMaxSumMean) {
  Tensor a = Tensor::from_vector<float>({3}, {1, 5, 3});
  Tensor b = Tensor::from_vector<float>({1}, {4});
  Tensor c = Tensor::from_vector<float>({2, 1}, {0, 10});
  auto mx = run_op("Max", {&a, &b, &c});
  EXPECT_EQ(mx[0].shape(), (Shape{2, 3}));
  expect_close(mx[0], {4, 5, 4, 10, 10, 10});
  expect_close(run_op("Min", {&a, &b})[0], {1, 4, 3});
  expect_close(run_op("Sum", {&a, &b, &c})[0], {5, 9, 7, 15, 19, 17});
  expect_close(run_op("Mean", {&a, &b})[0], {2.5, 4.5, 3.5});
}

TEST(RefElementwise, CastBetweenTypes) {
  Tensor x = Tensor::from_vector<float>({4}, {-1.7f, 0, 2.9f, 65504});
  auto i = run_op("Cast", {&x}, {Attribute::make_int("to", static_cast<int64_t>(DataType::Int32))});
  EXPECT_EQ(i[0].dtype(), DataType::Int32);
  EXPECT_EQ(values(i[0]), (std::vector<double>{-1, 0, 2, 65504}));  // truncation toward zero
  auto b = run_op("Cast", {&x}, {Attribute::make_int("to", static_cast<int64_t>(DataType::Bool))});
  EXPECT_EQ(values(b[0]), (std::vector<double>{1, 0, 1, 1}));
  auto h = run_op("Cast", {&x}, {Attribute::make_int("to", static_cast<int64_t>(DataType::Float16))});
  EXPECT_EQ(h[0].data<uint16_t>()[3], 0x7bff);
  auto back = run_op("Cast", {&h[0]}, {Attribute::make_int("to", static_cast<int64_t>(DataType::Float))});
  EXPECT_NEAR(back[0].data<float>()[0], -1.7f, 1e-3);
  auto s = run_op("Cast", {&x}, {Attribute::make_int("to", static_cast<int64_t>(DataType::String))});
  EXPECT_EQ(s[0].string_data()[2], "2.9");
}

TEST(RefElementwise, IsNaNIsInfSign) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = Tensor::from_vector<float>({4}, {std::nanf(""), inf, -inf, -3});
  EXPECT_EQ(values(run_op("IsNaN", {&x})[0]), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(run_op("IsInf", {&x}, {Attribute::make_int("detect_negative", 0)})[0]), (std::vector<double>{0, 1, 0, 0}));
  Tensor y = Tensor::from_vector<int32_t>({3}, {-4, 0, 9});
  EXPECT_EQ(values(run_op("Sign", {&y})[0]), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(values(run_op("Abs", {&y})[0]), (std::vector<double>{4, 0, 9}));
}

TEST(RefElementwise, BitShiftAndPRelu) {
  Tensor a = Tensor::from_vector<uint8_t>({3}, {1, 2, 255});
  Tensor s = Tensor::from_vector<uint8_t>({3}, {1, 3, 4});
  EXPECT_EQ(values(run_op("BitShift", {&a, &s}, {Attribute::make_string("direction", "LEFT")})[0]), (std::vector<double>{2, 16, 240}));
  EXPECT_EQ(values(run_op("BitShift", {&a, &s}, {Attribute::make_string("direction", "RIGHT")})[0]), (std::vector<double>{0, 0, 15}));
  Tensor x = Tensor::from_vector<float>({2, 2}, {-1, 2, -3, 4});
  Tensor slope = Tensor::from_vector<float>({2}, {0.5f, 0.25f});
  expect_close(run_op("PRelu", {&x, &slope})[0], {-0.5, 2, -1.5, 4});
}

TEST(RefElementwise, Float16ArithmeticWidensToFloat) {
  Tensor a(DataType::Float16, {2});
  a.data<uint16_t>()[0] = 0x3c00;  // 1
  a.data<uint16_t>()[1] = 0x4000;  // 2
  auto y = run_op("Add", {&a, &a});
  EXPECT_EQ(y[0].dtype(), DataType::Float16);
  EXPECT_EQ(y[0].data<uint16_t>()[0], 0x4000);
  EXPECT_EQ(y[0].data<uint16_t>()[1], 0x4400);
}

TEST(RefElementwise, DeclaresInPlacePairs) {
  OneNode un("Exp", 1, 1), bin("Add", 2, 1);
  KernelInfo info;
  info.graph = &un.graph;
  info.node = &un.node();
  info.opset = 17;
  EXPECT_EQ(KernelRegistry::global().create(info, "reference")->inplace_pairs(), (std::vector<std::pair<int, int>>{{0, 0}}));
  info.graph = &bin.graph;
  info.node = &bin.node();
  EXPECT_EQ(KernelRegistry::global().create(info, "reference")->inplace_pairs(), (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}}));
}

}  // namespace
}  // namespace fusor::test
