// Dynamic quantization's fast kernels against their references: DynamicQuantizeLinear (the range
// in chunks, then QuantizeLinear's vector loop) must give the reference's bytes, scale and zero
// point exactly, on lengths around the 16-lane steps and the chunking, all-positive, all-zero and
// NaN inputs; fusor.MatMulIntegerToFloat (the int8 GEMM with per-call column constants) must give
// the reference's floats exactly without a bias or activation (both compute the exact int32 sum
// times the float product AScale * BScale[n]), and to float rounding with them, over int8 and
// uint8 weights, per-tensor and per-column scales and zero points, K not a multiple of 4, and
// the GELU that runs as a separate vectorized pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

std::vector<Tensor> dql(const Tensor& x, std::string_view impl) {
  return run_node(OpType("", "DynamicQuantizeLinear"), {x}, {}, impl, 3, {}, 17);
}

void expect_same_dql(const Tensor& x, const std::string& what) {
  const std::vector<Tensor> ref = dql(x, "reference"), fast = dql(x, "fast");
  ASSERT_EQ(ref.size(), 3u);
  ASSERT_EQ(fast.size(), 3u);
  EXPECT_EQ(ref[1].data<float>()[0], fast[1].data<float>()[0]) << what << ": scale";
  EXPECT_EQ(ref[2].data<uint8_t>()[0], fast[2].data<uint8_t>()[0]) << what << ": zero point";
  ASSERT_EQ(ref[0].numel(), fast[0].numel());
  for (int64_t i = 0; i < ref[0].numel(); ++i)
    ASSERT_EQ(ref[0].data<uint8_t>()[i], fast[0].data<uint8_t>()[i]) << what << ": element " << i;
}

TEST(DynamicQuantizeLinearFast, MatchesTheReferenceExactly) {
  for (int64_t n : {1, 15, 16, 17, 1000, 32768, 32769, 100003}) {
    expect_same_dql(rnd({n}, static_cast<uint32_t>(n), -3.0f, 2.0f), "mixed n=" + std::to_string(n));
    expect_same_dql(rnd({n}, static_cast<uint32_t>(n + 1), 0.5f, 4.0f), "positive n=" + std::to_string(n));
  }
  // Values on the rounding ties of the scale they give (x / scale = k + 0.5).
  std::vector<float> ties;
  for (int k = -100; k <= 155; ++k) ties.push_back(static_cast<float>(k) + 0.5f);
  expect_same_dql(Tensor::from_vector<float>({static_cast<int64_t>(ties.size())}, ties), "ties");
}

TEST(DynamicQuantizeLinearFast, ZeroAndNanInputs) {
  const Tensor zeros = Tensor::from_vector<float>({2, 40}, std::vector<float>(80, 0.0f));
  expect_same_dql(zeros, "zeros");
  EXPECT_EQ(dql(zeros, "fast")[1].data<float>()[0], 0.0f);
  std::vector<float> v(70000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 97) * 0.25f - 7.0f;
  v[40000] = std::numeric_limits<float>::quiet_NaN();  // in the second chunk
  expect_same_dql(Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v), "NaN");
  const std::vector<Tensor> empty = dql(Tensor(DataType::Float, {0, 5}), "fast");
  EXPECT_EQ(empty[0].shape(), (Shape{0, 5}));
  EXPECT_EQ(empty[1].data<float>()[0], 0.0f);
}

struct MmCase {
  int64_t m, k, n;
  bool b_signed, per_column, with_zero, with_bias;
  std::string act;
};

TEST(MatMulIntegerToFloatFast, MatchesTheReference) {
  const std::vector<MmCase> cases = {
      {4, 12, 5, true, false, false, false, ""},      {3, 5, 7, true, true, true, false, ""},
      {37, 64, 100, false, true, true, false, ""},    {17, 384, 64, true, false, true, true, ""},
      {9, 30, 33, false, false, false, true, "Relu"}, {20, 96, 70, true, true, false, true, "Gelu"},
      {1, 7, 1, true, false, true, false, ""},
  };
  for (const MmCase& c : cases) {
    const std::string what = "m " + std::to_string(c.m) + " k " + std::to_string(c.k) + " n " + std::to_string(c.n) +
                             " act '" + c.act + "'";
    const DataType bt = c.b_signed ? DataType::Int8 : DataType::UInt8;
    const Tensor a = random_bytes({2, c.m, c.k}, DataType::UInt8, 1);
    const Tensor b = random_bytes({c.k, c.n}, bt, 2);
    const Tensor as = scalar(0.0123f), az = Tensor::scalar<uint8_t>(131);
    const Tensor bs = c.per_column ? rnd({c.n}, 3, 0.001f, 0.01f) : rnd({}, 3, 0.001f, 0.01f);
    Tensor bz;
    if (c.with_zero) {
      bz = random_bytes(c.per_column ? Shape{c.n} : Shape{}, bt, 4);
    }
    const Tensor bias = c.with_bias ? rnd({c.n}, 5) : Tensor();
    std::vector<Attribute> attrs;
    if (!c.act.empty()) attrs.push_back(Attribute::make_string("activation", c.act));
    const std::vector<Tensor> ins = {a, b, as, bs, az, bz, bias};
    const std::vector<bool> constant = {false, true, false, true, false, true, true};
    const Tensor ref = fused("MatMulIntegerToFloat", ins, attrs, "reference", constant);
    const Tensor fast = fused("MatMulIntegerToFloat", ins, attrs, "fast", constant);
    ASSERT_EQ(ref.shape(), fast.shape()) << what;
    ASSERT_EQ(ref.shape(), (Shape{2, c.m, c.n})) << what;
    const bool exact = !c.with_bias && c.act.empty();
    for (int64_t i = 0; i < ref.numel(); ++i) {
      const float r = ref.data<float>()[i], f = fast.data<float>()[i];
      if (exact) {
        ASSERT_EQ(r, f) << what << ": element " << i;
      } else {
        ASSERT_NEAR(r, f, 2e-6 * std::max(1.0f, std::fabs(r))) << what << ": element " << i;
      }
    }
  }
}

TEST(MatMulIntegerToFloatFast, EmptyA) {
  const Tensor b = random_bytes({6, 4}, DataType::Int8, 9);
  const std::vector<Tensor> ins = {Tensor(DataType::UInt8, {0, 6}), b, scalar(0.1f), scalar(0.2f),
                                   Tensor::scalar<uint8_t>(3), Tensor(), Tensor()};
  const Tensor y = fused("MatMulIntegerToFloat", ins, {}, "fast", {false, true, false, true, false, true, true});
  EXPECT_EQ(y.shape(), (Shape{0, 4}));
}

TEST(MatMulIntegerToFloatFast, RuntimeZeroPointAndScaleAreRead) {
  // The same kernel object sees different A parameters on each call (as each input's
  // DynamicQuantizeLinear gives): the results follow them.
  const Tensor a = random_bytes({6, 20}, DataType::UInt8, 7), b = random_bytes({20, 9}, DataType::Int8, 8);
  const Tensor bs = scalar(0.02f);
  const std::vector<bool> constant = {false, true, false, true, false, true, true};
  for (uint8_t z : {0, 1, 128, 255})
    for (float s : {0.5f, 0.031f}) {
      const std::vector<Tensor> ins = {a, b, scalar(s), bs, Tensor::scalar<uint8_t>(z), Tensor(), Tensor()};
      const Tensor ref = fused("MatMulIntegerToFloat", ins, {}, "reference", constant);
      const Tensor fast = fused("MatMulIntegerToFloat", ins, {}, "fast", constant);
      for (int64_t i = 0; i < ref.numel(); ++i)
        ASSERT_EQ(ref.data<float>()[i], fast.data<float>()[i]) << "zero point " << int(z) << " scale " << s;
    }
}

}  // namespace
}  // namespace fusor::test
