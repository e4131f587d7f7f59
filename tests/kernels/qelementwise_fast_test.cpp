// The fast int8 elementwise kernels against their references on tensors large enough to be split
// over the threads (ThreadPool::serial() has every core): fusor.QAdd / fusor.QMul contiguous and
// broadcast (a bias row, an attention mask), QuantizeLinear and DequantizeLinear. QAdd/QMul fold
// the scales into two constants, so a result may sit one step from the reference's where the
// float value is within rounding of a tie (few such elements); Quantize/Dequantize are exact. A
// chunk at a wrong offset or a row walked with the wrong broadcast stride shows as many elements
// far off. fusor.QMatMul with a residual or bias Z in its epilogue likewise.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

Tensor bytes(const Shape& s, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint8_t> v(static_cast<size_t>(shape_numel(s)));
  for (auto& b : v) b = static_cast<uint8_t>(g());
  return Tensor::from_vector<uint8_t>(s, v);
}

TEST(QBinaryFast, MatchesTheReferenceWhenSplit) {
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {{{128, 384}, {384}},          {{384}, {128, 384}},      {{128, 384}, {128, 384}},
                                   {{1, 6, 128, 128}, {1, 1, 1, 128}}, {{100003}, {100003}}, {{5, 7}, {7}},
                                   {{1536, 128}, {1536, 1}}};
  for (const char* op : {"QAdd", "QMul"})
    for (const Case& c : cases) {
      const Tensor a = bytes(c.a, 1), b = bytes(c.b, 2);
      const std::vector<Attribute> attrs = {
          Attribute::make_float("a_scale", 0.02f), Attribute::make_int("a_zero_point", 125),
          Attribute::make_float("b_scale", 0.008f), Attribute::make_int("b_zero_point", 3),
          Attribute::make_float("y_scale", op[1] == 'A' ? 0.025f : 0.01f), Attribute::make_int("y_zero_point", 14)};
      const Tensor ref = fused(op, {a, b}, attrs, "reference"), fast = fused(op, {a, b}, attrs, "fast");
      ASSERT_EQ(ref.shape(), fast.shape());
      int64_t off = 0;
      for (int64_t i = 0; i < ref.numel(); ++i) {
        const int d = std::abs(static_cast<int>(ref.data<uint8_t>()[i]) - static_cast<int>(fast.data<uint8_t>()[i]));
        ASSERT_LE(d, 1) << op << " " << shape_str(c.a) << " + " << shape_str(c.b) << " element " << i;
        off += d;
      }
      EXPECT_LE(off, ref.numel() / 100 + 2) << op << " " << shape_str(c.a) << " + " << shape_str(c.b);
    }
}

// fusor.QMatMul with a Z added in the epilogue (rules qmatmul_add*: a QDQ graph's bias Add, one
// value per column read by every row, or a residual shaped like Y) against the reference, which
// quantizes the product and adds Z as the QDQ graph does. Ties may land one step apart (the
// epilogue and the reference fold the scales differently); a Z read with the wrong row stride or
// column shows as many elements several steps off.
TEST(QMatMulFast, ResidualMatchesTheReference) {
  struct Case {
    int64_t m, k, n;
    bool per_column;
  };
  const Case cases[] = {{128, 64, 40, true}, {37, 48, 35, false}, {130, 32, 16, true}, {3, 24, 7, true}};
  for (const Case& c : cases) {
    const Tensor a = bytes({c.m, c.k}, 5), z = bytes(c.per_column ? Shape{c.n} : Shape{c.m, c.n}, 6);
    std::mt19937 g(7);
    std::vector<int8_t> w(static_cast<size_t>(c.k * c.n));
    for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(g() % 255) - 127);
    const Tensor b = Tensor::from_vector<int8_t>({c.k, c.n}, w), bs = Tensor::from_vector<float>({}, {0.004f});
    const std::vector<Attribute> attrs = {
        Attribute::make_float("x_scale", 0.02f),    Attribute::make_int("x_zero_point", 120),
        Attribute::make_float("conv_scale", 0.3f),  Attribute::make_int("conv_zero_point", 110),
        Attribute::make_float("z_scale", 0.05f),    Attribute::make_int("z_zero_point", 9),
        Attribute::make_float("y_scale", 0.35f),    Attribute::make_int("y_zero_point", 100)};
    const std::vector<Tensor> ins = {a, b, bs, Tensor(), Tensor(), Tensor(), z};
    const std::vector<bool> constant = {false, true, true, false, false, false, c.per_column};
    const Tensor ref = fused("QMatMul", ins, attrs, "reference", constant);
    const Tensor fast = fused("QMatMul", ins, attrs, "fast", constant);
    ASSERT_EQ(ref.shape(), fast.shape());
    int64_t off = 0;
    for (int64_t i = 0; i < ref.numel(); ++i) {
      const int d = std::abs(static_cast<int>(ref.data<uint8_t>()[i]) - static_cast<int>(fast.data<uint8_t>()[i]));
      ASSERT_LE(d, 1) << c.m << "x" << c.k << "x" << c.n << " element " << i;
      off += d;
    }
    EXPECT_LE(off, ref.numel() / 100 + 2) << c.m << "x" << c.k << "x" << c.n;
  }
}

TEST(QuantizeFast, ExactWhenSplit) {
  for (int64_t n : {int64_t{49152}, int64_t{100003}, int64_t{7}}) {
    const Tensor x = rnd({n}, static_cast<uint32_t>(n), -3.0f, 3.0f);
    const Tensor scale = Tensor::scalar<float>(0.0234f);
    const Tensor zero = Tensor::from_vector<uint8_t>({}, {131});
    const Tensor q_ref = run_node(OpType("", "QuantizeLinear"), {x, scale, zero}, {}, "reference", 1, {false, true, true}, 19)[0];
    const Tensor q_fast = run_node(OpType("", "QuantizeLinear"), {x, scale, zero}, {}, "fast", 1, {false, true, true}, 19)[0];
    ASSERT_EQ(q_ref.numel(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(q_ref.data<uint8_t>()[i], q_fast.data<uint8_t>()[i]) << "n " << n << " element " << i;
    const Tensor d_ref = run_node(OpType("", "DequantizeLinear"), {q_ref, scale, zero}, {}, "reference", 1, {false, true, true}, 19)[0];
    const Tensor d_fast = run_node(OpType("", "DequantizeLinear"), {q_ref, scale, zero}, {}, "fast", 1, {false, true, true}, 19)[0];
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(d_ref.data<float>()[i], d_fast.data<float>()[i]) << "n " << n << " element " << i;
  }
}

}  // namespace
}  // namespace fusor::test
