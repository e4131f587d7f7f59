// Elementwise loops split over a thread pool (kernels/reference/elementwise_loops.h) give the
// serial loop's results exactly, for same-shape, scalar and broadcasting-row operands, and
// BroadcastIndex::seek_row lands where walking next_row() from the start does; short rows (walked
// in runs along the next dim) give what the element-by-element walk gives.
#include <gtest/gtest.h>

#include "kernels/common/broadcast.h"
#include "kernels/reference/elementwise_loops.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

TEST(BroadcastIndex, SeekRowMatchesWalking) {
  const Shape out = {2, 3, 5, 7};
  const std::vector<Shape> ins = {{2, 1, 5, 7}, {3, 1, 1}};
  BroadcastIndex walk(out, ins);
  const int64_t rows = walk.num_rows();
  EXPECT_EQ(rows * walk.row_length(), shape_numel(out));
  for (int64_t r = 0; r < rows; ++r, walk.next_row()) {
    BroadcastIndex seek(out, ins);
    seek.seek_row(r);
    EXPECT_EQ(seek.offset(0), walk.offset(0)) << "row " << r;
    EXPECT_EQ(seek.offset(1), walk.offset(1)) << "row " << r;
  }
}

TEST(ElementwiseThreads, SplitLoopsEqualTheSerialLoop) {
  ThreadPool pool(2);
  auto add = [](float p, float q) { return p * 2.f + q; };
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4, 64, 40, 40}, {4, 64, 40, 40}},  // same shape
      {{4, 64, 40, 40}, {}},               // scalar
      {{1, 64, 80, 80}, {64, 1, 1}},       // per-channel rows (PaddleOCR's affine)
      {{2, 3, 120, 160}, {1, 3, 1, 160}},  // both contiguous along rows
      {{3, 1, 90, 200}, {1, 7, 90, 1}},    // both broadcast
      {{1, 9, 56, 56, 16}, {1, 9, 1, 1, 16}},  // blocked tensor times a per-channel vector
      {{2, 3, 40, 30, 8}, {2, 3, 40, 1, 8}},   // short rows, runs shorter than the split
  };
  uint32_t seed = 1;
  for (const auto& [sa, sb] : cases) {
    const Tensor a = rnd(sa, seed++), b = rnd(sb, seed++);
    const Shape out = broadcast_shapes({sa, sb}, "test");
    Tensor serial(DataType::Float, out), split(DataType::Float, out);
    binary_loop<float, float, float>(a, b, serial, add);
    binary_loop<float, float, float>(a, b, split, add, &pool);
    for (int64_t i = 0; i < serial.numel(); ++i)
      ASSERT_EQ(serial.data<float>()[i], split.data<float>()[i]) << shape_str(sa) << " op " << shape_str(sb) << " at " << i;
    Tensor u1(DataType::Float, sa), u2(DataType::Float, sa);
    unary_loop<float, float>(a, u1, [](float v) { return v * v; });
    unary_loop<float, float>(a, u2, [](float v) { return v * v; }, &pool);
    for (int64_t i = 0; i < u1.numel(); ++i) ASSERT_EQ(u1.data<float>()[i], u2.data<float>()[i]);
  }
}

TEST(ElementwiseThreads, ShortRowRunsEqualTheElementWalk) {
  ThreadPool pool(2);
  auto f = [](float p, float q) { return p * 3.f - q; };
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 5, 7, 9, 16}, {2, 5, 1, 1, 16}}, {{1, 5, 1, 1, 16}, {2, 5, 7, 9, 16}}, {{3, 12, 16}, {3, 12, 1}},
      {{4, 9, 10, 3}, {1, 9, 10, 1}},       {{64, 8}, {8}},                        {{7, 20, 16}, {1, 20, 16}},
      {{2, 9, 56, 20, 16}, {2, 9, 1, 1, 16}},  // large enough to split
  };
  uint32_t seed = 7;
  for (const auto& [sa, sb] : cases) {
    const Tensor a = rnd(sa, seed++), b = rnd(sb, seed++);
    const Shape out = broadcast_shapes({sa, sb}, "test");
    Tensor want(DataType::Float, out), serial(DataType::Float, out), split(DataType::Float, out);
    BroadcastIndex it(out, {sa, sb});
    for (int64_t i = 0; i < want.numel(); ++i, it.next())
      want.data<float>()[i] = f(a.data<float>()[it.offset(0)], b.data<float>()[it.offset(1)]);
    binary_loop<float, float, float>(a, b, serial, f);
    binary_loop<float, float, float>(a, b, split, f, &pool);
    for (int64_t i = 0; i < want.numel(); ++i) {
      ASSERT_EQ(want.data<float>()[i], serial.data<float>()[i]) << shape_str(sa) << " op " << shape_str(sb) << " at " << i;
      ASSERT_EQ(want.data<float>()[i], split.data<float>()[i]) << shape_str(sa) << " op " << shape_str(sb) << " at " << i;
    }
    if (shape_numel(sa) != want.numel()) continue;
    // In place over the first operand (the executor reuses a dying input's buffer).
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      Tensor y = a.clone();
      binary_loop<float, float, float>(y, b, y, f, p);
      for (int64_t i = 0; i < want.numel(); ++i)
        ASSERT_EQ(want.data<float>()[i], y.data<float>()[i]) << shape_str(sa) << " op " << shape_str(sb) << " in place at " << i;
    }
  }
}

}  // namespace
}  // namespace fusor::test
