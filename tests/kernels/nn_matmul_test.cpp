// Hand-checked MatMul / Gemm cases and a randomized check against an independent triple loop.
#include <gtest/gtest.h>

#include <random>

#include "kernels/common/matmul_shape.h"
#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

Tensor ft(Shape s, std::vector<float> v) { return Tensor::from_vector<float>(std::move(s), v); }

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

TEST(NnMatMul, TwoByTwo) {
  Tensor a = ft({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = ft({3, 2}, {7, 8, 9, 10, 11, 12});
  auto y = run_op("MatMul", {&a, &b});
  EXPECT_EQ(y[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values(y[0]), (std::vector<float>{58, 64, 139, 154}));
}

TEST(NnMatMul, VectorOperandsDropDims) {
  Tensor v = ft({3}, {1, 2, 3});
  Tensor m = ft({3, 2}, {1, 0, 0, 1, 1, 1});
  auto y = run_op("MatMul", {&v, &m});
  EXPECT_EQ(y[0].shape(), (Shape{2}));
  EXPECT_EQ(values(y[0]), (std::vector<float>{4, 5}));
  Tensor m2 = ft({2, 3}, {1, 0, 0, 1, 1, 1});
  auto y2 = run_op("MatMul", {&m2, &v});
  EXPECT_EQ(y2[0].shape(), (Shape{2}));
  EXPECT_EQ(values(y2[0]), (std::vector<float>{1, 6}));
  auto y3 = run_op("MatMul", {&v, &v});
  EXPECT_EQ(y3[0].shape(), (Shape{}));
  EXPECT_EQ(values(y3[0]), (std::vector<float>{14}));
}

TEST(NnMatMul, BatchBroadcast) {
  // A: 2 x 1 x (1x2), B: 3 x (2x1) -> 2 x 3 x (1x1)
  Tensor a = ft({2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor b = ft({3, 2, 1}, {1, 1, 0, 1, 2, 0});
  auto y = run_op("MatMul", {&a, &b});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(values(y[0]), (std::vector<float>{3, 2, 2, 7, 4, 6}));
}

TEST(NnMatMul, Int64AndMismatch) {
  Tensor a = Tensor::from_vector<int64_t>({1, 2}, {3, 4});
  Tensor b = Tensor::from_vector<int64_t>({2, 1}, {5, 6});
  auto y = run_op("MatMul", {&a, &b});
  EXPECT_EQ(y[0].data<int64_t>()[0], 39);
  Tensor c = ft({3, 3}, std::vector<float>(9, 1));
  Tensor d = ft({2, 3}, std::vector<float>(6, 1));
  EXPECT_THROW(run_op("MatMul", {&c, &d}), Error);
}

TEST(NnMatMul, ShapeRules) {
  MatMulShape s = matmul_shape({5, 1, 4, 3}, {7, 3, 2}, "t");
  EXPECT_EQ(s.out, (Shape{5, 7, 4, 2}));
  EXPECT_EQ(s.batch_count(), 35);
  EXPECT_EQ(s.a_matrix(8), 1);  // batch (1, 1) -> A matrix 1
  EXPECT_EQ(s.b_matrix(8), 1);
  EXPECT_THROW(matmul_shape({2, 4, 3}, {3, 3, 2}, "t"), Error);
}

TEST(NnGemm, TransposesAlphaBetaAndBroadcastC) {
  Tensor a = ft({3, 2}, {1, 4, 2, 5, 3, 6});  // A^T = [[1,2,3],[4,5,6]]
  Tensor b = ft({2, 3}, {7, 9, 11, 8, 10, 12});  // B^T = [[7,8],[9,10],[11,12]]
  Tensor c = ft({2}, {1, -1});
  auto y = run_op("Gemm", {&a, &b, &c},
                  {Attribute::make_int("transA", 1), Attribute::make_int("transB", 1),
                   Attribute::make_float("alpha", 0.5f), Attribute::make_float("beta", 2.0f)});
  EXPECT_EQ(y[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values(y[0]), (std::vector<float>{31, 30, 71.5f, 75}));
  auto y2 = run_op("Gemm", {&a, &b, nullptr}, {Attribute::make_int("transA", 1), Attribute::make_int("transB", 1)});
  EXPECT_EQ(values(y2[0]), (std::vector<float>{58, 64, 139, 154}));
  Tensor bad_c = ft({3}, {1, 2, 3});
  EXPECT_THROW(run_op("Gemm", {&a, &b, &bad_c}, {Attribute::make_int("transA", 1), Attribute::make_int("transB", 1)}),
               Error);
}

TEST(NnMatMul, RandomAgainstTripleLoop) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t B = 3, M = 5, K = 7, N = 4;
  Tensor a(DataType::Float, {B, M, K}), b(DataType::Float, {K, N});
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = u(rng);
  for (int64_t i = 0; i < b.numel(); ++i) b.data<float>()[i] = u(rng);
  auto y = run_op("MatMul", {&a, &b});
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += double(a.data<float>()[(bi * M + m) * K + k]) * b.data<float>()[k * N + n];
        EXPECT_NEAR(y[0].data<float>()[(bi * M + m) * N + n], s, 1e-5);
      }
}

}  // namespace
}  // namespace fusor::test
