// rules/extended/normalizations.rules with the whole extended set: LayerNorm and RMSNorm written
// out as exporters produce them, and the residual Add before a LayerNorm, each into one fused op
// with the model's epsilon.
#include "shipped_rules.h"

using namespace fusor;
using namespace fusor::test;

namespace {

const Shape kX = {2, 5, 32};

Attribute last_axis() { return Attribute::make_ints("axes", {-1}); }

// (x - mean) / sqrt(var + eps) * gamma + beta; `paddle`: Mul(d, d) and a Reciprocal.
ValueId layer_norm(GB& b, ValueId x, float eps, bool paddle, const std::string& p) {
  ValueId m = b.node("ReduceMean", {x}, p + "mean", {last_axis()});
  ValueId d = b.node("Sub", {x, m}, p + "sub");
  ValueId sq = paddle ? b.node("Mul", {d, d}, p + "sq") : b.node("Pow", {d, b.scalar(p + "two", 2.f)}, p + "sq");
  ValueId v = b.node("ReduceMean", {sq}, p + "var", {last_axis()});
  ValueId s = b.node("Sqrt", {b.node("Add", {v, b.scalar(p + "eps", eps)}, p + "add_eps")}, p + "sqrt");
  ValueId n = paddle ? b.node("Mul", {d, b.node("Reciprocal", {s}, p + "rcp")}, p + "norm") : b.node("Div", {d, s}, p + "norm");
  ValueId g = b.node("Mul", {n, b.init(p + "gamma", ramp({32}, 0.5f, 0.1f))}, p + "scale");
  return b.node("Add", {g, b.init(p + "beta", ramp({32}, -0.3f, 0.05f))}, p + "shift");
}

TEST(NormalizationRules, LayerNormTorchForm) {
  auto f = fuse([](GB& b) { b.output(layer_norm(b, b.input("x", kX), 1e-5f, false, "")); }, {{"x", kX}});
  ASSERT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();
  const Node* ln = f->only("LayerNorm");
  ASSERT_NE(ln, nullptr);
  EXPECT_NEAR(ln->attr_float("epsilon", 0.f), 1e-5f, 1e-12);
  EXPECT_EQ(ln->inputs.size(), 3u);
  EXPECT_LT(f->max_diff, 1e-5);
}

// An epsilon of 1e-12 must stay 1e-12 (not be taken for an Add of 0), on rows of equal values
// where it is all that keeps the division finite.
TEST(NormalizationRules, LayerNormPaddleFormKeepsATinyEpsilon) {
  auto f = fuse([](GB& b) { b.output(layer_norm(b, b.input("x", kX), 1e-12f, true, "")); }, {{"x", kX}});
  ASSERT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();
  EXPECT_NEAR(f->only("LayerNorm")->attr_float("epsilon", 0.f), 1e-12f, 1e-18);
  EXPECT_LT(f->max_diff, 1e-5);
}

TEST(NormalizationRules, RmsNormWithReciprocalSqrt) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX);
    ValueId v = b.node("ReduceMean", {b.node("Pow", {x, b.scalar("two", 2.f)}, "sq")}, "ms", {last_axis()});
    ValueId r = b.node("Div", {b.scalar("one", 1.f), b.node("Sqrt", {b.node("Add", {v, b.scalar("eps", 1e-6f)}, "ae")}, "sqrt")}, "rsqrt");
    b.output(b.node("Mul", {b.init("w", ramp({32}, 0.2f, 0.1f)), b.node("Mul", {x, r}, "xn")}, "y"));
  }, {{"x", kX}});
  ASSERT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();
  EXPECT_NEAR(f->only("RMSNorm")->attr_float("epsilon", 0.f), 1e-6f, 1e-12);
  EXPECT_LT(f->max_diff, 1e-5);
}

TEST(NormalizationRules, ReductionOverAnotherAxisStays) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX);
    ValueId m = b.node("ReduceMean", {x}, "mean", {Attribute::make_ints("axes", {1})});
    ValueId d = b.node("Sub", {x, m}, "sub");
    ValueId v = b.node("ReduceMean", {b.node("Mul", {d, d}, "sq")}, "var", {Attribute::make_ints("axes", {1})});
    ValueId n = b.node("Div", {d, b.node("Sqrt", {b.node("Add", {v, b.scalar("eps", 1e-5f)}, "ae")}, "sqrt")}, "norm");
    b.output(b.node("Mul", {n, b.init("gamma", ramp({32}, 0.5f, 0.1f))}, "y"));
  }, {{"x", kX}});
  EXPECT_EQ(f->count("LayerNorm"), 0) << f->graph.dump();
}

// A residual sum that also feeds the next residual (pre-norm style) and one used only by its
// LayerNorm (post-norm): SkipLayerNorm, with its Sum output in the first case.
TEST(NormalizationRules, ResidualAddBecomesSkipLayerNorm) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX), h = b.input("h", kX);
    ValueId s = b.node("Add", {x, h}, "residual");
    ValueId y = layer_norm(b, s, 1e-5f, false, "ln_");
    ValueId s2 = b.node("Add", {s, b.node("Relu", {y}, "ff")}, "residual2");
    b.output(layer_norm(b, s2, 1e-5f, false, "ln2_"));
  }, {{"x", kX}, {"h", kX}});
  EXPECT_EQ(f->count("SkipLayerNorm"), 2) << f->graph.dump();
  EXPECT_EQ(f->graph.count("Add"), 0) << f->graph.dump();
  EXPECT_EQ(f->fired("skip_layer_norm_with_sum"), 1);
  EXPECT_EQ(f->fired("skip_layer_norm"), 1);
  EXPECT_LT(f->max_diff, 1e-5);
}

}  // namespace
