// kernels/common helpers: broadcasting, axis normalization, float16/bfloat16 conversion,
// strided copy, dtype dispatch.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "kernels/common/axes.h"
#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/half.h"
#include "kernels/common/strided_copy.h"
#include "kernels/thread_pool.h"

namespace fusor {
namespace {

TEST(RefCommon, BroadcastShapes) {
  EXPECT_EQ(broadcast_shapes({{2, 3, 4}, {4}}, "t"), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({{2, 1, 4}, {3, 1}}, "t"), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({{}, {5}}, "t"), (Shape{5}));
  EXPECT_EQ(broadcast_shapes({{0, 1}, {1, 3}}, "t"), (Shape{0, 3}));
  EXPECT_THROW(broadcast_shapes({{2, 3}, {4}}, "t"), Error);
  EXPECT_TRUE(broadcasts_to({3, 1}, {2, 3, 4}));
  EXPECT_FALSE(broadcasts_to({2, 3, 4}, {3, 4}));
}

TEST(RefCommon, BroadcastIndexWalksOffsets) {
  // out 2x3 from a: 2x1 and b: 3. Offsets of a: row index; of b: column index.
  BroadcastIndex it({2, 3}, {{2, 1}, {3}});
  const int64_t want_a[] = {0, 0, 0, 1, 1, 1}, want_b[] = {0, 1, 2, 0, 1, 2};
  for (int i = 0; i < 6; ++i, it.next()) {
    EXPECT_EQ(it.offset(0), want_a[i]) << i;
    EXPECT_EQ(it.offset(1), want_b[i]) << i;
  }
}

// Offsets from BroadcastIndex (per element and per row) against a direct computation.
TEST(RefCommon, BroadcastIndexMatchesDirectOffsets) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {1, 3, 1}}, {{1, 256, 5, 5}, {1, 256, 1, 1}}, {{4, 1, 3}, {5, 1}}, {{2, 2}, {}}, {{3, 1, 2, 1}, {3, 4, 1, 5}}};
  for (const auto& [sa, sb] : cases) {
    const Shape out = broadcast_shapes({sa, sb}, "t");
    auto direct = [&](const Shape& in, int64_t flat) {
      int64_t off = 0, stride = 1;
      for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
        const int64_t c = flat % out[d];
        flat /= out[d];
        const int id = d - static_cast<int>(out.size() - in.size());
        if (id >= 0) {
          if (in[id] != 1) off += c * stride;
          stride *= in[id];
        }
      }
      return off;
    };
    BroadcastIndex it(out, {sa, sb});
    for (int64_t i = 0; i < shape_numel(out); ++i, it.next()) {
      ASSERT_EQ(it.offset(0), direct(sa, i)) << shape_str(sa) << " " << i;
      ASSERT_EQ(it.offset(1), direct(sb, i)) << shape_str(sb) << " " << i;
    }
    BroadcastIndex rows(out, {sa, sb});
    const int64_t len = rows.row_length();
    for (int64_t i = 0; i < shape_numel(out); i += len, rows.next_row())
      for (int64_t j = 0; j < len; ++j) {
        ASSERT_EQ(rows.offset(0) + j * rows.row_stride(0), direct(sa, i + j)) << shape_str(sa) << " " << i + j;
        ASSERT_EQ(rows.offset(1) + j * rows.row_stride(1), direct(sb, i + j)) << shape_str(sb) << " " << i + j;
      }
  }
}

TEST(RefCommon, Axes) {
  EXPECT_EQ(normalize_axis(-1, 4, "t"), 3);
  EXPECT_EQ(normalize_axis(0, 4, "t"), 0);
  EXPECT_THROW(normalize_axis(4, 4, "t"), Error);
  EXPECT_THROW(normalize_axis(-5, 4, "t"), Error);
  EXPECT_EQ(normalize_axes({-1, 0}, 3, "t"), (std::vector<int64_t>{0, 2}));
  EXPECT_THROW(normalize_axes({1, -2}, 3, "t"), Error);  // both are axis 1
  EXPECT_EQ(row_major_strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(dims_product({2, 3, 4}, 1, 3), 12);
}

TEST(RefCommon, HalfConversions) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);                  // overflow -> inf
  EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001);         // smallest subnormal
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3c00);    // halfway: ties to even (down)
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3c02);    // halfway: ties to even (up)
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x0001), 5.9604644775390625e-8f);
  EXPECT_EQ(half_to_float(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
}

TEST(RefCommon, StridedCopyReversesAndBroadcasts) {
  Tensor x = Tensor::from_vector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y(DataType::Int32, {2, 3});
  strided_copy(x, 5, {-3, -1}, y);  // both dims reversed
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{6, 5, 4, 3, 2, 1}));
  Tensor z(DataType::Int32, {2, 3});
  strided_copy(x, 0, {0, 1}, z);  // row 0 repeated
  EXPECT_EQ(z.to_int64_vector(), (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
}

// The row form of strided_copy (merged dims, memcpy or gather rows, rows split over a pool)
// against the element-by-element definition, on transposes, slices with steps and reversals,
// broadcasts and size-1 dims, small and large enough to be split over two threads.
TEST(RefCommon, StridedCopyMatchesTheDefinition) {
  ThreadPool two(2);
  std::mt19937 rng(7);
  auto check = [&](const Shape& in_shape, const Shape& out_shape, int64_t base, const std::vector<int64_t>& st,
                   const char* what) {
    Tensor x(DataType::Int32, in_shape);
    std::iota(x.data<int32_t>(), x.data<int32_t>() + x.numel(), 0);
    std::vector<int32_t> want(static_cast<size_t>(shape_numel(out_shape)));
    std::vector<int64_t> idx(out_shape.size(), 0);
    for (size_t i = 0; i < want.size(); ++i) {
      int64_t off = base, rem = static_cast<int64_t>(i);
      for (int d = static_cast<int>(out_shape.size()) - 1; d >= 0; --d) {
        off += (rem % out_shape[d]) * st[d];
        rem /= out_shape[d];
      }
      want[i] = x.data<int32_t>()[off];
    }
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two}) {
      Tensor y(DataType::Int32, out_shape);
      strided_copy(x, base, st, y, pool);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), y.data<int32_t>())) << what << (pool ? " (2 threads)" : "");
    }
  };
  // The blocked transposes (NCHW <-> NHWC, sizes not multiples of the 4 x 4 and 16-row tiles).
  for (const auto& [in, perm] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
           {{2, 37, 11, 13}, {0, 2, 3, 1}}, {{2, 11, 13, 37}, {0, 3, 1, 2}}, {{1, 96, 56, 56}, {0, 2, 3, 1}},
           {{1, 56, 56, 96}, {0, 3, 1, 2}}, {{5, 4}, {1, 0}}, {{3, 4, 6}, {0, 2, 1}}, {{3, 18, 5}, {2, 1, 0}},
           // Into rows of 3 and 2 (an image's channels moved last), large enough for two threads.
           {{2, 3, 67, 101}, {0, 2, 3, 1}}, {{1, 2, 5, 7}, {0, 2, 3, 1}}, {{3, 130, 2}, {0, 2, 1}},
           // Image patches as rows (a patch embedding's im2col): runs of 16, 4, 3 and 5 contiguous values.
           {{1, 3, 14, 16, 14, 16}, {0, 2, 4, 1, 3, 5}}, {{2, 3, 5, 4, 6, 4}, {0, 2, 4, 1, 3, 5}},
           {{1, 2, 3, 3, 7, 3}, {0, 2, 4, 1, 3, 5}}, {{2, 4, 9, 5}, {0, 2, 1, 3}}}) {
    const std::vector<int64_t> strides = row_major_strides(in);
    Shape out(in.size());
    std::vector<int64_t> st(in.size());
    for (size_t d = 0; d < in.size(); ++d) out[d] = in[perm[d]], st[d] = strides[perm[d]];
    check(in, out, 0, st, "NCHW/NHWC transpose");
  }
  for (int trial = 0; trial < 60; ++trial) {
    const bool big = trial % 6 == 0;
    const int rank = 1 + static_cast<int>(rng() % 4);
    Shape in(rank);
    for (auto& d : in) d = big ? 8 + static_cast<int64_t>(rng() % 40) : 1 + static_cast<int64_t>(rng() % 5);
    const std::vector<int64_t> strides = row_major_strides(in);
    // A transpose: a random permutation.
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Shape out(rank);
    std::vector<int64_t> st(rank);
    for (int d = 0; d < rank; ++d) {
      out[d] = in[perm[d]];
      st[d] = strides[perm[d]];
    }
    check(in, out, 0, st, "transpose");
    // A slice: a random window per dim, step 1, 2 or -1.
    int64_t base = 0;
    for (int d = 0; d < rank; ++d) {
      const int64_t lo = static_cast<int64_t>(rng() % static_cast<uint32_t>(in[d]));
      const int kind = static_cast<int>(rng() % 3);
      if (kind == 2) {  // reversed from lo down to 0
        out[d] = lo + 1;
        st[d] = -strides[d];
      } else {
        const int64_t step = kind + 1;
        out[d] = (in[d] - lo + step - 1) / step;
        st[d] = step * strides[d];
      }
      base += lo * strides[d];
    }
    check(in, out, base, st, "slice");
    // A broadcast: an extra leading dim and size-1 dims repeated.
    Shape bout{3};
    std::vector<int64_t> bst{0};
    for (int d = 0; d < rank; ++d) {
      bout.push_back(in[d] == 1 ? 4 : in[d]);
      bst.push_back(in[d] == 1 ? 0 : strides[d]);
    }
    check(in, bout, 0, bst, "broadcast");
  }
}

TEST(RefCommon, DispatchRejectsOutsideFamily) {
  int size = 0;
  dispatch_numeric(DataType::Int16, "t", [&](auto tag) { size = sizeof(typename decltype(tag)::type); });
  EXPECT_EQ(size, 2);
  EXPECT_THROW(dispatch_float(DataType::Int32, "t", [](auto) {}), Error);
  EXPECT_THROW(dispatch_numeric(DataType::Bool, "t", [](auto) {}), Error);
  dispatch_by_size(DataType::Float16, "t", [&](auto tag) { size = sizeof(typename decltype(tag)::type); });
  EXPECT_EQ(size, 2);
}

}  // namespace
}  // namespace fusor
