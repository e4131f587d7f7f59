// Instantiating a rule's test block as a graph (engine/ruletest/instantiate.h): which nodes,
// inputs, constants and attributes come out, checked structurally.
#include <gtest/gtest.h>

#include "dsl/rules.h"
#include "engine/ruletest/instantiate.h"

using namespace fusor;
using namespace fusor::ruletest;

namespace {

struct Loaded {
  dsl::RuleSet set;
  const dsl::RuleDecl* rule = nullptr;
};

Loaded load(const std::string& text) {
  Loaded l;
  dsl::Diagnostics diags;
  l.set = dsl::load_rules_from_text("t.rules", "fusor-rules 1\n" + text, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  if (!l.set.rules.empty()) l.rule = l.set.rules[0];
  return l;
}

std::unique_ptr<Model> build(const Loaded& l, size_t test = 0) {
  return instantiate(*l.rule, l.rule->tests.at(test), 17, 0);
}

const Node& producer(const Graph& g, const std::string& value) {
  ValueId v = g.find_value(value);
  EXPECT_NE(v, kNoValue) << value;
  return g.node(g.value(v).producer);
}

}  // namespace

TEST(Instantiate, ConvClampFromTheReference) {
  auto l = load(R"(
rule conv_clamp
  match { c = Conv(x, w, b?)
          y = Relu | Clip (c) }
  where { const(w, b) }
  rewrite { y = Relu(c) }
  test relu { x: float[1, 8, 16, 16]; w: const float[8, 8, 3, 3]; b: none; c.pads = [1, 1, 1, 1] }
  test clip { x: float[1, 8, 8, 8]; w: const float[4, 8, 1, 1]; b: const float[4];
              y.op = Clip; y.min = 0.0; y.max = 6.0; tolerance 1e-4 }
)");
  ASSERT_NE(l.rule, nullptr);
  auto m = build(l, 0);
  const Graph& g = *m->graph;
  EXPECT_EQ(g.num_nodes(), 3u);  // Conv, Relu and the sink
  EXPECT_EQ(producer(g, "y").op, OpType::onnx("Identity"));
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  EXPECT_EQ(g.value(g.inputs()[0]).type.str(), "float[1,8,16,16]");
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).type.str(), "float[1,8,16,16]");  // pads kept the size
  const Node& conv = producer(g, "c");
  EXPECT_EQ(conv.op, OpType::onnx("Conv"));
  EXPECT_EQ(conv.attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  ASSERT_EQ(conv.inputs.size(), 2u);  // b: none
  const Value& w = g.value(conv.inputs[1]);
  ASSERT_TRUE(w.is_constant_initializer());
  EXPECT_EQ(w.constant->shape(), (Shape{8, 8, 3, 3}));
  for (int64_t i = 0; i < w.constant->numel(); ++i) {
    ASSERT_GE(w.constant->as_double(i), 0.5);  // random constants are in [0.5, 1.5)
    ASSERT_LT(w.constant->as_double(i), 1.5);
  }
  EXPECT_EQ(producer(g, "y.match").op, OpType::onnx("Relu"));  // the first alternative

  auto m2 = build(l, 1);
  const Graph& g2 = *m2->graph;
  const Node& clip = producer(g2, "y.match");
  EXPECT_EQ(clip.op, OpType::onnx("Clip"));
  // Opset 17 spells min/max as inputs.
  ASSERT_EQ(clip.inputs.size(), 3u);
  EXPECT_EQ(g2.value(clip.inputs[1]).constant->as_double(0), 0.0);
  EXPECT_EQ(g2.value(clip.inputs[2]).constant->as_double(0), 6.0);
  EXPECT_EQ(g2.value(clip.inputs[2]).constant->dtype(), DataType::Float);
  EXPECT_EQ(producer(g2, "c").inputs.size(), 3u);  // b given
  EXPECT_EQ(g2.value(g2.outputs()[0]).type.str(), "float[1,4,8,8]");
}

TEST(Instantiate, LiteralsTakeTheirSiblingsTypeAndGivenValuesFill) {
  auto l = load(R"(
rule r
  match { t = Add(x, 0)
          y = Slice(t, s, e, a?, 1) }
  rewrite { y = t }
  test { x: int32[4, 6]; s: const int64[1] = [0]; e: const int64[1] = 4 }
)");
  ASSERT_NE(l.rule, nullptr);
  auto m = build(l);
  const Graph& g = *m->graph;
  const Node& add = producer(g, "t");
  const Tensor& zero = *g.value(add.inputs[1]).constant;
  EXPECT_EQ(zero.dtype(), DataType::Int32);  // as x (Add's T)
  EXPECT_EQ(zero.rank(), 0);
  const Node& slice = producer(g, "y.match");
  ASSERT_EQ(slice.inputs.size(), 5u);
  EXPECT_EQ(slice.inputs[3], kNoValue);  // a? not given: absent
  const Tensor& step = *g.value(slice.inputs[4]).constant;
  EXPECT_EQ(step.dtype(), DataType::Int64);  // as s (Slice's Tind)
  EXPECT_EQ(step.shape(), Shape{1});         // as its 1-D siblings under Tind
  EXPECT_EQ(g.value(slice.inputs[2]).constant->as_int64(0), 4);  // one value fills the tensor
  EXPECT_EQ(g.value(g.outputs()[0]).type.str(), "int32[4,6]");
}

TEST(Instantiate, PatternBodiesAndWildcards) {
  auto l = load(R"(
pattern view(x) {
  y = Reshape(x, _)
} | {
  y = Flatten(x)
}
rule view_gone
  match { y = view(x) }
  where { shape(x) == shape(y) }
  rewrite { y = x }
  test first { x: float[2, 3] }
  test flat { x: float[2, 3]; y.op = Flatten }
)");
  ASSERT_NE(l.rule, nullptr);
  auto m = build(l, 0);
  const Node& reshape = producer(*m->graph, "y.match");
  EXPECT_EQ(reshape.op, OpType::onnx("Reshape"));
  // `_` in an integer-only input: the shape of the node's first input.
  EXPECT_EQ(m->graph->value(reshape.inputs[1]).constant->to_int64_vector(), (std::vector<int64_t>{2, 3}));
  auto m2 = build(l, 1);
  EXPECT_EQ(producer(*m2->graph, "y.match").op, OpType::onnx("Flatten"));
}

TEST(Instantiate, SameSeedSameConstants) {
  auto l = load(R"(
rule r
  match { y = Mul(x, w) }
  where { const(w) }
  rewrite { y = Mul(w, x) }
  test { x: float[3]; w: const float[3] }
)");
  auto a = build(l), b = build(l);
  auto c = instantiate(*l.rule, l.rule->tests[0], 17, 1);
  auto w = [](const Model& m) { return m.graph->value(m.graph->find_value("w")).constant; };
  EXPECT_TRUE(w(*a)->bit_equal(*w(*b)));
  EXPECT_FALSE(w(*a)->bit_equal(*w(*c)));
}
