// Concat's copies split over a thread pool (kernels/reference/concat_split.h) give the serial
// copies' result exactly: many inputs of unequal sizes (DenseNet's blocked Concats), an outer
// dimension (axis > 0 with N > 1), an empty input, another element type; and the Concat node,
// run through the registry, equals the element-by-element definition.
#include <gtest/gtest.h>

#include "kernels/reference/concat_split.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

TEST(ConcatThreads, SplitCopiesEqualTheSerialCopies) {
  ThreadPool pool(2);
  struct Case {
    std::vector<Shape> ins;
    int64_t axis;
  };
  std::vector<Case> cases;
  {
    Case dense{{}, 1};  // blocked [1, CB, 28, 28, 16]: 8 + 2k blocks
    for (int k = 0; k < 12; ++k) dense.ins.push_back({1, k == 0 ? 8 : 2, 28, 28, 16});
    cases.push_back(dense);
  }
  cases.push_back({{{3, 40, 30, 30}, {3, 0, 30, 30}, {3, 24, 30, 30}, {3, 7, 30, 30}}, 1});
  cases.push_back({{{2, 5, 300, 70}, {2, 5, 300, 1}, {2, 5, 300, 33}}, 3});
  uint32_t seed = 1;
  for (const auto& c : cases) {
    std::vector<Tensor> ts;
    std::vector<const Tensor*> ins;
    for (const Shape& s : c.ins) ts.push_back(rnd(s, seed++));
    for (const Tensor& t : ts) ins.push_back(&t);
    const Shape out = concat_shape(ins, c.axis, "test");
    Tensor serial(DataType::Float, out), split(DataType::Float, out);
    concat_into(ins, c.axis, serial);
    concat_into(ins, c.axis, split, &pool);
    EXPECT_TRUE(near(split, serial, 0)) << shape_str(out);
    // The definition: output element (o, a, i) is input k's (o, a - offset_k, i).
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < c.axis; ++d) outer *= out[d];
    for (size_t d = c.axis + 1; d < out.size(); ++d) inner *= out[d];
    int64_t pos = 0;
    for (const Tensor& t : ts) {
      const int64_t len = t.dim(static_cast<int>(c.axis));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t a = 0; a < len; ++a)
          for (int64_t i = 0; i < inner; i += 97)
            ASSERT_EQ(split.data<float>()[(o * out[c.axis] + pos + a) * inner + i], t.data<float>()[(o * len + a) * inner + i]);
      pos += len;
    }
  }
  // int64 elements: 8 bytes each.
  const Tensor a = Tensor::from_vector<int64_t>({2, 70000}, std::vector<int64_t>(140000, 7));
  const Tensor b = Tensor::from_vector<int64_t>({2, 50000}, std::vector<int64_t>(100000, -3));
  Tensor y1(DataType::Int64, {2, 120000}), y2(DataType::Int64, {2, 120000});
  concat_into({&a, &b}, 1, y1);
  concat_into({&a, &b}, 1, y2, &pool);
  EXPECT_TRUE(near(y2, y1, 0));
  EXPECT_EQ(y2.data<int64_t>()[120000 + 69999], 7);
  EXPECT_EQ(y2.data<int64_t>()[120000 + 70000], -3);
}

}  // namespace
}  // namespace fusor::test
