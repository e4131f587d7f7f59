// The random generators (kernels/reference/random_ops.cpp): a seed fixes the values, the values
// have the distribution asked for, Bernoulli's extremes are exact.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

// Mean and standard deviation of t's elements.
std::pair<double, double> moments(const Tensor& t) {
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s += t.as_double(i);
    s2 += t.as_double(i) * t.as_double(i);
  }
  const double n = static_cast<double>(t.numel()), mean = s / n;
  return {mean, std::sqrt(std::max(0.0, s2 / n - mean * mean))};
}

TEST(RandomOps, SeedFixesTheValues) {
  auto draw = [](float seed) {
    return run_op("RandomUniform", {}, {Attribute::make_ints("shape", {64}), Attribute::make_float("seed", seed)})[0];
  };
  Tensor a = draw(3.f), b = draw(3.f), c = draw(4.f);
  EXPECT_TRUE(a.bit_equal(b));
  EXPECT_FALSE(a.bit_equal(c));
}

TEST(RandomOps, UniformLiesInItsRangeWithItsMean) {
  Tensor y = run_op("RandomUniform", {}, {Attribute::make_ints("shape", {100, 100}), Attribute::make_float("low", -2.f),
                                          Attribute::make_float("high", 6.f), Attribute::make_float("seed", 1.f)})[0];
  ASSERT_EQ(y.dtype(), DataType::Float);
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(y.data<float>()[i] >= -2.f && y.data<float>()[i] <= 6.f) << i;
  auto [mean, sd] = moments(y);
  EXPECT_NEAR(mean, 2.0, 0.1);                  // 4 standard errors (8/sqrt(12)/100 = 0.023)
  EXPECT_NEAR(sd, 8.0 / std::sqrt(12.0), 0.05);
}

TEST(RandomOps, NormalLikeTakesShapeAndTypeFromItsInput) {
  Tensor x(DataType::Double, {50, 200});
  Tensor y = run_op("RandomNormalLike", {&x}, {Attribute::make_float("mean", 1.f), Attribute::make_float("scale", 3.f),
                                               Attribute::make_float("seed", 7.f)})[0];
  ASSERT_EQ(y.dtype(), DataType::Double);
  ASSERT_EQ(y.shape(), x.shape());
  auto [mean, sd] = moments(y);
  EXPECT_NEAR(mean, 1.0, 0.09);  // 4 standard errors (3/100)
  EXPECT_NEAR(sd, 3.0, 0.1);
}

TEST(RandomOps, BernoulliIsExactAtZeroAndOneAndFollowsP) {
  Tensor p = Tensor::from_vector<float>({4}, {0.f, 1.f, 0.f, 1.f});
  Tensor y = run_op("Bernoulli", {&p}, {Attribute::make_float("seed", 0.f)}, 1, 15)[0];
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 0, 1}));
  Tensor half(DataType::Float, {10000});
  for (int64_t i = 0; i < half.numel(); ++i) half.data<float>()[i] = 0.25f;
  Tensor z = run_op("Bernoulli", {&half}, {Attribute::make_int("dtype", static_cast<int64_t>(DataType::Int32)),
                                           Attribute::make_float("seed", 5.f)}, 1, 15)[0];
  ASSERT_EQ(z.dtype(), DataType::Int32);
  double ones = 0;
  for (int64_t i = 0; i < z.numel(); ++i) {
    ASSERT_TRUE(z.data<int32_t>()[i] == 0 || z.data<int32_t>()[i] == 1);
    ones += z.data<int32_t>()[i];
  }
  EXPECT_NEAR(ones / 10000, 0.25, 0.018);  // 4 standard errors (sqrt(0.25 * 0.75 / 10000))
}

}  // namespace
}  // namespace fusor::test
