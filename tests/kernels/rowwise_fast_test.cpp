// The fast row-wise kernels (kernels/rowwise) against the reference kernels, through the registry,
// on every instruction set the machine runs: ReduceMean / ReduceSum over trailing axes (axes as an
// attribute and as an input, keepdims 0 and 1, row lengths around the vector widths) and Softmax
// over the last axis (opset 13) and over a coerced trailing block (opset 11); the cases the fast
// kernels hand to the reference (an inner axis) must give the reference's result exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "kernels/cpu_features.h"
#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {
namespace {


// The largest |fast - reference| / (1 + |reference|); fails on a shape mismatch.
double compare(const Tensor& want, const Tensor& got, const std::string& what) {
  EXPECT_EQ(want.shape(), got.shape()) << what;
  if (want.shape() != got.shape()) return 1e9;
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.as_double(i), b = got.as_double(i);
    worst = std::max(worst, std::fabs(a - b) / (1.0 + std::fabs(a)));
  }
  return worst;
}

Tensor reduce(const char* op, const Tensor& x, const std::vector<int64_t>& axes, int keepdims, int64_t opset,
              std::string_view impl) {
  std::vector<Attribute> attrs = {Attribute::make_int("keepdims", keepdims)};
  std::vector<Tensor> ins = {x};
  std::vector<bool> constant = {false};
  const bool axes_input = std::string(op) == "ReduceSum" ? opset >= 13 : opset >= 18;
  if (axes_input) {
    ins.push_back(Tensor::from_vector<int64_t>({static_cast<int64_t>(axes.size())}, axes));
    constant.push_back(true);
  } else {
    attrs.push_back(Attribute::make_ints("axes", axes));
  }
  return run_node(OpType("", op), ins, attrs, impl, 1, constant, opset)[0];
}

Tensor softmax(const Tensor& x, int64_t axis, int64_t opset, std::string_view impl) {
  return run_node(OpType("", "Softmax"), {x}, {Attribute::make_int("axis", axis)}, impl, 1, {false}, opset)[0];
}

struct ReduceCase {
  Shape x;
  std::vector<int64_t> axes;
};

const ReduceCase kReduce[] = {
    {{1, 128, 384}, {-1}}, {{2, 3, 17}, {2}}, {{4, 5, 6}, {1, 2}}, {{3, 7}, {-1}}, {{2, 65}, {1}},
    {{1, 1, 5}, {-1}},     {{6, 16}, {-1}},   {{2, 3, 4, 9}, {-2, -1}},
};

TEST(FastRowwise, ReduceMeanAndSumMatchReference) {
  for (Isa isa : testing_gemm::runnable_isas()) {
    IsaScope scope(isa);
    double worst = 0;
    uint32_t seed = 1;
    for (const ReduceCase& c : kReduce)
      for (const char* op : {"ReduceMean", "ReduceSum"})
        for (int64_t opset : {13, 17, 18})
          for (int keepdims : {0, 1}) {
            const Tensor x = rnd(c.x, seed++, -3.f, 3.f);
            const std::string what = std::string(op) + " opset " + std::to_string(opset) + " keepdims " +
                                     std::to_string(keepdims) + " on " + isa_name(isa);
            const double d = compare(reduce(op, x, c.axes, keepdims, opset, "reference"),
                                     reduce(op, x, c.axes, keepdims, opset, "fast"), what);
            EXPECT_LT(d, 5e-5) << what;  // float sums of up to 384 values in [-3, 3]
            worst = std::max(worst, d);
          }
    // Float sums against the reference's double ones: a zero difference would mean no fast path ran.
    EXPECT_GT(worst, 0.0) << isa_name(isa);
  }
}

TEST(FastRowwise, ReduceOverInnerAxesIsTheReference) {
  const Tensor x = rnd({3, 4, 5}, 7, -2.f, 2.f);
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{0}, {1}, {0, 2}})
    EXPECT_EQ(compare(reduce("ReduceMean", x, axes, 1, 17, "reference"), reduce("ReduceMean", x, axes, 1, 17, "fast"),
                      "inner axes"),
              0.0);
}

TEST(FastRowwise, SoftmaxMatchesReference) {
  const Shape shapes[] = {{1, 6, 128, 128}, {2, 3, 17}, {4, 1}, {5, 16}, {3, 33}, {2, 7, 100}};
  for (Isa isa : testing_gemm::runnable_isas()) {
    IsaScope scope(isa);
    double worst = 0;
    uint32_t seed = 50;
    for (const Shape& s : shapes) {
      const Tensor x = rnd(s, seed++, -8.f, 8.f);
      const std::string what = shape_str(s) + " on " + isa_name(isa);
      double d = compare(softmax(x, -1, 13, "reference"), softmax(x, -1, 13, "fast"), what);
      EXPECT_LT(d, 1e-6) << what;
      worst = std::max(worst, d);
      d = compare(softmax(x, 1, 11, "reference"), softmax(x, 1, 11, "fast"), "opset 11 " + what);
      EXPECT_LT(d, 1e-6) << "opset 11 " << what;
    }
    if (isa != Isa::Scalar) {
      EXPECT_GT(worst, 0.0) << isa_name(isa) << ": the polynomial exp never ran";
    }
  }
}

TEST(FastRowwise, SoftmaxAlongAnInnerAxisIsTheReference) {
  const Tensor x = rnd({2, 5, 7}, 9, -4.f, 4.f);
  EXPECT_EQ(compare(softmax(x, 1, 13, "reference"), softmax(x, 1, 13, "fast"), "inner axis"), 0.0);
}

TEST(FastRowwise, SoftmaxOfLargeValuesStaysFinite) {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1000.f, 999.f, -1000.f, -50.f, -50.f, -50.f});
  const Tensor y = softmax(x, -1, 13, "fast");
  const Tensor r = softmax(x, -1, 13, "reference");
  EXPECT_LT(compare(r, y, "large"), 1e-6);
}

}  // namespace
}  // namespace fusor::test
