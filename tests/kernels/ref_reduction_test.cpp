// Hand-checked cases for the reduction reference kernels (Reduce*, ArgMax/ArgMin, CumSum, TopK).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

// [[1, 2, 3], [4, 5, 6]]
Tensor m23() { return Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(RefReduction, AxesAttributeKeepdims) {
  Tensor x = m23();
  auto s = run_op("ReduceMean", {&x}, {Attribute::make_ints("axes", {1})}, 1, 13);
  EXPECT_EQ(s[0].shape(), (Shape{2, 1}));
  expect_near(s[0], {2, 5});
  auto n = run_op("ReduceMax", {&x}, {Attribute::make_ints("axes", {0}), Attribute::make_int("keepdims", 0)}, 1, 13);
  EXPECT_EQ(n[0].shape(), (Shape{3}));
  expect_near(n[0], {4, 5, 6});
  auto all = run_op("ReduceProd", {&x}, {Attribute::make_int("keepdims", 0)}, 1, 13);
  EXPECT_EQ(all[0].shape(), (Shape{}));
  expect_near(all[0], {720});
}

TEST(RefReduction, ReduceSumAxesInputAndNoop) {
  Tensor x = m23();
  Tensor axes = Tensor::from_vector<int64_t>({1}, {-1});
  expect_near(run_op("ReduceSum", {&x, &axes}, {}, 1, 13)[0], {6, 15});
  Tensor none(DataType::Int64, {0});
  expect_near(run_op("ReduceSum", {&x, &none}, {}, 1, 13)[0], {21});
  auto noop = run_op("ReduceSum", {&x, &none}, {Attribute::make_int("noop_with_empty_axes", 1)}, 1, 13);
  EXPECT_EQ(noop[0].shape(), (Shape{2, 3}));
  expect_near(noop[0], {1, 2, 3, 4, 5, 6});
  // Opset 11 ReduceSum still takes axes as an attribute.
  expect_near(run_op("ReduceSum", {&x}, {Attribute::make_ints("axes", {0})}, 1, 11)[0], {5, 7, 9});
}

TEST(RefReduction, NormsAndLogs) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {-3, 4});
  expect_near(run_op("ReduceL1", {&x}, {}, 1, 13)[0], {7});
  expect_near(run_op("ReduceL2", {&x}, {}, 1, 13)[0], {5});
  expect_near(run_op("ReduceSumSquare", {&x}, {}, 1, 13)[0], {25});
  Tensor p = Tensor::from_vector<float>({2}, {1, 3});
  expect_near(run_op("ReduceLogSum", {&p}, {}, 1, 13)[0], {std::log(4.0)});
  // Large values must not overflow: log(e^1000 + e^1000) = 1000 + log 2.
  Tensor big = Tensor::from_vector<float>({2}, {1000, 1000});
  expect_near(run_op("ReduceLogSumExp", {&big}, {}, 1, 13)[0], {1000 + std::log(2.0)}, 1e-3);
}

TEST(RefReduction, IntegerReductionsStayExact) {
  Tensor x = Tensor::from_vector<int64_t>({3}, {4000000000LL, 5, -1});
  auto s = run_op("ReduceSum", {&x}, {Attribute::make_int("keepdims", 0)}, 1, 11);
  EXPECT_EQ(s[0].dtype(), DataType::Int64);
  EXPECT_EQ(s[0].data<int64_t>()[0], 4000000004LL);
  EXPECT_EQ(run_op("ReduceMin", {&x}, {}, 1, 13)[0].data<int64_t>()[0], -1);
}

TEST(RefReduction, ArgMaxArgMinTiesAndLastIndex) {
  Tensor x = Tensor::from_vector<float>({2, 3}, {1, 5, 5, 7, 0, 7});
  auto a = run_op("ArgMax", {&x}, {Attribute::make_int("axis", 1)});
  EXPECT_EQ(a[0].dtype(), DataType::Int64);
  EXPECT_EQ(a[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values(a[0]), (std::vector<double>{1, 0}));
  auto last = run_op("ArgMax", {&x}, {Attribute::make_int("axis", 1), Attribute::make_int("select_last_index", 1),
                                      Attribute::make_int("keepdims", 0)});
  EXPECT_EQ(last[0].shape(), (Shape{2}));
  EXPECT_EQ(values(last[0]), (std::vector<double>{2, 2}));
  EXPECT_EQ(values(run_op("ArgMin", {&x}, {Attribute::make_int("axis", 0)})[0]), (std::vector<double>{0, 1, 0}));
}

TEST(RefReduction, CumSumModes) {
  Tensor x = Tensor::from_vector<int32_t>({4}, {1, 2, 3, 4});
  Tensor axis = Tensor::scalar<int64_t>(0);
  EXPECT_EQ(values(run_op("CumSum", {&x, &axis})[0]), (std::vector<double>{1, 3, 6, 10}));
  EXPECT_EQ(values(run_op("CumSum", {&x, &axis}, {Attribute::make_int("exclusive", 1)})[0]), (std::vector<double>{0, 1, 3, 6}));
  EXPECT_EQ(values(run_op("CumSum", {&x, &axis}, {Attribute::make_int("reverse", 1)})[0]), (std::vector<double>{10, 9, 7, 4}));
  Tensor m = m23();
  Tensor ax1 = Tensor::scalar<int32_t>(1);
  expect_near(run_op("CumSum", {&m, &ax1})[0], {1, 3, 6, 4, 9, 15});
}

TEST(RefReduction, TopKLargestSmallestAndTies) {
  Tensor x = Tensor::from_vector<float>({2, 4}, {3, 1, 4, 1, 5, 9, 2, 6});
  Tensor k = Tensor::from_vector<int64_t>({1}, {2});
  auto top = run_op("TopK", {&x, &k}, {}, 2, 11);
  EXPECT_EQ(top[0].shape(), (Shape{2, 2}));
  expect_near(top[0], {4, 3, 9, 6});
  EXPECT_EQ(values(top[1]), (std::vector<double>{2, 0, 1, 3}));
  auto low = run_op("TopK", {&x, &k}, {Attribute::make_int("largest", 0)}, 2, 11);
  expect_near(low[0], {1, 1, 2, 5});
  EXPECT_EQ(values(low[1]), (std::vector<double>{1, 3, 2, 0}));  // equal values: lower index first
  auto old = run_op("TopK", {&x}, {Attribute::make_int("k", 1), Attribute::make_int("axis", 0)}, 2, 9);
  expect_near(old[0], {5, 9, 4, 6});
  Tensor too_big = Tensor::from_vector<int64_t>({1}, {5});
  EXPECT_THROW(run_op("TopK", {&x, &too_big}, {}, 2, 11), Error);
}

}  // namespace
}  // namespace fusor::test
