// rules/extended/activations.rules with the whole extended set: each written-out activation as
// exporters produce it becomes its one fused op, and computes what it computed.
#include "shipped_rules.h"

using namespace fusor;
using namespace fusor::test;

namespace {

const Shape kX = {2, 6, 16};

// torch's nn.GELU export: (x * (1 + erf(x / sqrt 2))) * 0.5.
TEST(ActivationRules, GeluErfTorchForm) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX);
    ValueId e = b.node("Erf", {b.node("Div", {x, b.scalar("sqrt2", 1.4142135381698608f)}, "div")}, "erf");
    ValueId t = b.node("Add", {e, b.scalar("one", 1.f)}, "add");
    ValueId m = b.node("Mul", {x, t}, "mul");
    b.output(b.node("Mul", {m, b.scalar("half", 0.5f)}, "y"));
  }, {{"x", kX}});
  EXPECT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();
  ASSERT_NE(f->only("Gelu"), nullptr);
  EXPECT_EQ(f->only("Gelu")->attr_string("approximate", "none"), "none");
  EXPECT_LT(f->max_diff, 1e-5);
}

// TF / Paddle: (x * 0.5) * (1 + erf(x * 0.70710678)), constants on the left.
TEST(ActivationRules, GeluErfTfFormWithMulAndCommutedOperands) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX);
    ValueId e = b.node("Erf", {b.node("Mul", {b.scalar("r", 0.7071067690849304f), x}, "scale")}, "erf");
    ValueId t = b.node("Add", {b.scalar("one", 1.f), e}, "add");
    ValueId h = b.node("Mul", {b.scalar("half", 0.5f), x}, "x_half");
    b.output(b.node("Mul", {h, t}, "y"));
  }, {{"x", kX}});
  EXPECT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();
  EXPECT_EQ(f->fired("gelu_erf"), 1);
  EXPECT_LT(f->max_diff, 1e-5);
}

TEST(ActivationRules, GeluTanhWithACubeWrittenAsProducts) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX);
    ValueId cube = b.node("Mul", {b.node("Mul", {x, x}, "sq"), x}, "cube");
    ValueId inner = b.node("Add", {x, b.node("Mul", {cube, b.scalar("c", 0.044715f)}, "mc")}, "inner");
    ValueId th = b.node("Tanh", {b.node("Mul", {inner, b.scalar("k", 0.7978845834732056f)}, "mk")}, "tanh");
    ValueId t = b.node("Add", {th, b.scalar("one", 1.f)}, "add");
    b.output(b.node("Mul", {b.node("Mul", {x, b.scalar("half", 0.5f)}, "x_half"), t}, "y"));
  }, {{"x", kX}});
  ASSERT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();
  EXPECT_EQ(f->only("Gelu")->attr_string("approximate", ""), "tanh");
  EXPECT_LT(f->max_diff, 1e-5);
}

TEST(ActivationRules, AGeluWithAnotherConstantStays) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX);
    ValueId e = b.node("Erf", {b.node("Div", {x, b.scalar("sqrt2", 1.4142135f)}, "div")}, "erf");
    ValueId m = b.node("Mul", {x, b.node("Add", {e, b.scalar("one", 1.f)}, "add")}, "mul");
    b.output(b.node("Mul", {m, b.scalar("not_half", 0.6f)}, "y"));
  }, {{"x", kX}});
  EXPECT_EQ(f->count("Gelu"), 0) << f->graph.dump();
  EXPECT_EQ(f->max_diff, 0.0);
}

TEST(ActivationRules, QuickGeluKeepsItsAlphaAndSiluNeedsTheSameX) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX);
    ValueId z = b.input("z", kX);
    ValueId w = b.input("w", kX);
    ValueId q = b.node("Mul", {x, b.node("Sigmoid", {b.node("Mul", {b.scalar("a", 1.702f), x}, "ax")}, "sig")}, "quick");
    ValueId s = b.node("Mul", {b.node("Sigmoid", {z}, "sz"), z}, "silu");
    ValueId n = b.node("Mul", {x, b.node("Sigmoid", {w}, "sw")}, "not_silu");
    b.output(b.node("Add", {b.node("Add", {q, s}, "a1"), n}, "y"));
  }, {{"x", kX}, {"z", kX}, {"w", kX}});
  ASSERT_EQ(f->count("QuickGelu"), 1) << f->graph.dump();
  EXPECT_NEAR(f->only("QuickGelu")->attr_float("alpha", 0.f), 1.702f, 1e-6);
  EXPECT_EQ(f->count("Silu"), 1) << f->graph.dump();
  EXPECT_EQ(f->graph.count("Sigmoid"), 1) << f->graph.dump();  // x * sigmoid(w) stays
  EXPECT_LT(f->max_diff, 1e-5);
}

// x * relu6(x + 3) / 6 as torch exports F.relu6 (Relu then Clip): HardSwish from opset 14,
// Mul(x, HardSigmoid(x)) before.
void relu6_hard_swish(GB& b) {
  ValueId x = b.input("x", kX);
  ValueId r = b.node("Relu", {b.node("Add", {x, b.scalar("three", 3.f)}, "add3")}, "relu");
  ValueId c = b.node("Clip", {r, b.scalar("lo", 0.f), b.scalar("hi", 6.f)}, "clip");
  b.output(b.node("Div", {b.node("Mul", {x, c}, "mul"), b.scalar("six", 6.f)}, "y"));
}

TEST(ActivationRules, HardSwishWrittenOutAtOpset17AndOpset13) {
  auto f17 = fuse(relu6_hard_swish, {{"x", kX}}, 17, -6.f, 6.f);
  EXPECT_EQ(f17->graph.g.num_nodes(), 1u) << f17->graph.dump();
  EXPECT_EQ(f17->graph.count("HardSwish"), 1) << f17->graph.dump();
  EXPECT_LT(f17->max_diff, 1e-6);
  auto f13 = fuse(relu6_hard_swish, {{"x", kX}}, 13, -6.f, 6.f);
  EXPECT_EQ(f13->graph.g.num_nodes(), 2u) << f13->graph.dump();
  EXPECT_EQ(f13->graph.count("HardSigmoid"), 1) << f13->graph.dump();
  EXPECT_LT(f13->max_diff, 1e-6);
}

TEST(ActivationRules, BiasAddThenGeluBecomesBiasGelu) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", kX);
    ValueId a = b.node("Add", {x, b.init("bias", ramp({16}, -0.5f, 0.1f))}, "bias_add");
    ValueId e = b.node("Erf", {b.node("Div", {a, b.scalar("sqrt2", 1.4142135f)}, "div")}, "erf");
    ValueId m = b.node("Mul", {a, b.node("Add", {e, b.scalar("one", 1.f)}, "add")}, "mul");
    b.output(b.node("Mul", {m, b.scalar("half", 0.5f)}, "y"));
  }, {{"x", kX}});
  EXPECT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();
  EXPECT_EQ(f->count("BiasGelu"), 1) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

}  // namespace
