// The shipped QDQ rules (rules/extended/quantized.rules) with constant folding on a small
// statically quantized graph, as ORT's quantize_static writes it: the QDQ Conv group becomes one
// fusor.QConv, its weight stays int8 (constant folding leaves a DequantizeLinear that feeds a
// QDQ group), and the result agrees with the QDQ graph within one step of the output scale. A
// DequantizeLinear feeding float math only (weight-only quantization) is still folded.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "dsl/rules.h"
#include "engine/exec/executor.h"
#include "dsl/lower.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

std::vector<Rule> quantized_rules() {
  dsl::Diagnostics diags;
  dsl::RuleSet set =
      dsl::load_rules({std::string(FUSOR_SOURCE_DIR) + "/rules/extended/quantized.rules"}, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  std::vector<Rule> rules = lower_rules(set.select(OptLevel::Extended, "cpu"), diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return rules;
}

int count_fusor(const GB& b, const char* name) {
  int n = 0;
  for (NodeId id : b.g.order()) n += b.g.node(id).op == OpType(kFusorDomain, name);
  return n;
}

// x -> Q -> DQ -> Conv(DQ(w int8, per channel), DQ(b int32)) -> Relu -> Q -> DQ -> y.
void qdq_conv(GB& b) {
  ValueId x = b.input("x", {1, 3, 8, 8});
  ValueId xs = b.scalar("xs", 0.02f), xz = b.init("xz", Tensor::scalar<uint8_t>(128));
  ValueId xq = b.node("QuantizeLinear", {x, xs, xz}, "xq");
  ValueId xd = b.node("DequantizeLinear", {xq, xs, xz}, "xd");
  Tensor w(DataType::Int8, {4, 3, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  ValueId wq = b.init("wq", std::move(w));
  ValueId ws = b.vec("ws", {0.004f, 0.003f, 0.005f, 0.002f});
  Tensor wz(DataType::Int8, {4});
  for (int64_t i = 0; i < 4; ++i) wz.data<int8_t>()[i] = 0;
  ValueId wzv = b.init("wz", std::move(wz));
  ValueId wd = b.node("DequantizeLinear", {wq, ws, wzv}, "wd", {Attribute::make_int("axis", 0)});
  ValueId bq = b.init("bq", Tensor::from_vector<int32_t>({4}, {100, -200, 300, 0}));
  ValueId bs = b.vec("bs", {0.02f * 0.004f, 0.02f * 0.003f, 0.02f * 0.005f, 0.02f * 0.002f});
  ValueId bd = b.node("DequantizeLinear", {bq, bs}, "bd", {Attribute::make_int("axis", 0)});
  ValueId c = b.node("Conv", {xd, wd, bd}, "conv", {Attribute::make_ints("pads", {1, 1, 1, 1})});
  ValueId r = b.node("Relu", {c}, "relu");
  ValueId ys = b.scalar("ys", 0.01f), yz = b.init("yz", Tensor::scalar<uint8_t>(0));
  ValueId yq = b.node("QuantizeLinear", {r, ys, yz}, "yq");
  b.output(b.node("DequantizeLinear", {yq, ys, yz}, "y"));
}

}  // namespace

TEST(QuantizedRules, QdqConvBecomesOneInt8ConvWithInt8Weights) {
  GB before, after;
  qdq_conv(before);
  qdq_conv(after);
  RewriteReport rep = run_rewrites(after.g, quantized_rules(), RewriteOptions{}, 17);
  after.g.verify();
  EXPECT_EQ(count_fusor(after, "QConv"), 1) << after.dump();
  EXPECT_EQ(after.count("Conv"), 0) << after.dump();
  EXPECT_EQ(after.count("Relu"), 0) << after.dump();
  // The weight is still the int8 initializer the QConv reads; no float copy of it was made.
  bool int8_weight = false;
  for (ValueId v : after.g.initializers()) {
    const Tensor& t = *after.g.value(v).constant;
    if (t.numel() == 4 * 3 * 3 * 3) {
      EXPECT_EQ(t.dtype(), DataType::Int8) << after.g.value(v).name;
      int8_weight = true;
    }
  }
  EXPECT_TRUE(int8_weight) << after.dump();

  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  Tensor x(DataType::Float, {1, 3, 8, 8});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = dist(gen);
  const std::vector<OpsetImport> opsets = {{"", 17}, {kFusorDomain, 1}};
  std::vector<Tensor> want = Executor(before.g, opsets).run({{"x", x}});
  std::vector<Tensor> got = Executor(after.g, opsets).run({{"x", x}});
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want[0].shape(), got[0].shape());
  double worst = 0;
  for (int64_t i = 0; i < want[0].numel(); ++i)
    worst = std::max(worst, std::fabs(want[0].as_double(i) - got[0].as_double(i)) / 0.01);
  EXPECT_LE(worst, 1.0 + 1e-6) << "steps of the output scale";
  (void)rep;
}

// Weight-only quantization: DQ(w) feeds a MatMul of a float activation; it folds into a float weight.
TEST(QuantizedRules, WeightOnlyDequantizeStillFolds) {
  GB b;
  ValueId x = b.input("x", {2, 4});
  Tensor w(DataType::Int8, {4, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(i * 9 - 50);
  ValueId wd = b.node("DequantizeLinear", {b.init("wq", std::move(w)), b.scalar("ws", 0.1f)}, "wd");
  b.output(b.node("MatMul", {x, wd}, "mm"));
  run_rewrites(b.g, quantized_rules(), RewriteOptions{}, 17);
  EXPECT_EQ(b.count("DequantizeLinear"), 0) << b.dump();
  EXPECT_EQ(b.count("MatMul"), 1) << b.dump();
}
