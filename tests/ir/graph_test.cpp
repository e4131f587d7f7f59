#include "core/ir/graph.h"

#include <gtest/gtest.h>

#include "core/util/error.h"

using namespace fusor;

namespace {

// x -> Relu -> a -> Neg -> y (graph output)
struct Chain {
  Graph g;
  ValueId x, a, y;
  NodeId relu, neg;
  Chain() {
    g.name = "chain";
    x = g.add_value("x", ValueType::tensor(DataType::Float, {2, 3}));
    g.add_input(x);
    a = g.add_value("a");
    y = g.add_value("y");
    relu = g.add_node(OpType::onnx("Relu"), {x}, std::vector<ValueId>{a}, {}, "relu");
    neg = g.add_node(OpType::onnx("Neg"), {a}, std::vector<ValueId>{y}, {}, "neg");
    g.add_output(y);
  }
};

}  // namespace

TEST(OpType, InternsToStableIntegers) {
  OpType a("", "Conv"), b("ai.onnx", "Conv"), c("fusor", "Conv");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.name(), "Conv");
  EXPECT_EQ(c.qualified(), "fusor.Conv");
}

TEST(Graph, ProducerAndUsesAreConsistent) {
  Chain c;
  EXPECT_EQ(c.g.value(c.a).producer, c.relu);
  ASSERT_EQ(c.g.value(c.a).uses.size(), 1u);
  EXPECT_EQ(c.g.value(c.a).uses[0].node, c.neg);
  EXPECT_EQ(c.g.num_nodes(), 2u);
  c.g.verify();
}

TEST(Graph, ReplaceAllUsesAndRemoveNode) {
  Chain c;
  c.g.replace_all_uses(c.a, c.x);  // Neg now reads x directly
  EXPECT_TRUE(c.g.value(c.a).uses.empty());
  c.g.remove_node(c.relu);
  EXPECT_FALSE(c.g.value(c.a).alive);  // unused output went with its node
  EXPECT_EQ(c.g.num_nodes(), 1u);
  c.g.verify();
  EXPECT_EQ(c.g.node(c.neg).inputs[0], c.x);
}

TEST(Graph, InsertBeforeKeepsTopologicalOrder) {
  Chain c;
  ValueId b = c.g.add_value("b");
  NodeId sig = c.g.add_node(OpType::onnx("Sigmoid"), {c.a}, std::vector<ValueId>{b}, {}, "sig", c.neg);
  c.g.set_input(c.neg, 0, b);
  auto order = c.g.order();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[1], sig);
  c.g.verify();
}

TEST(Graph, VerifyCatchesUseBeforeDefinition) {
  Chain c;
  c.g.move_before(c.neg, c.relu);
  EXPECT_THROW(c.g.verify(), Error);
  c.g.topo_sort();
  c.g.verify();
  EXPECT_EQ(c.g.order()[0], c.relu);
}

TEST(Graph, TopoSortReportsCycle) {
  Graph g;
  ValueId a = g.add_value("a"), b = g.add_value("b");
  g.add_node(OpType::onnx("Neg"), {b}, std::vector<ValueId>{a}, {}, "n1");
  g.add_node(OpType::onnx("Neg"), {a}, std::vector<ValueId>{b}, {}, "n2");
  try {
    g.topo_sort();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos);
  }
}

TEST(Graph, DuplicateNamesAreRejected) {
  Graph g;
  g.add_value("x");
  EXPECT_THROW(g.add_value("x"), Error);
  EXPECT_NE(g.unique_name("x"), "x");
}

TEST(Graph, SubgraphCapturesAreImplicitUses) {
  Chain c;
  auto body = std::make_shared<Graph>();
  body->name = "then";
  Attribute attr;
  attr.name = "then_branch";
  attr.kind = AttrKind::Graph;
  attr.g = body;
  body->set_parent(&c.g);
  ValueId cap = body->add_capture("a", c.a);
  ValueId out = body->add_value("t_out");
  body->add_node(OpType::onnx("Neg"), {cap}, std::vector<ValueId>{out}, {}, "t_neg");
  body->add_output(out);
  ValueId cond = c.g.add_value("cond", ValueType::tensor(DataType::Bool, {}));
  c.g.add_input(cond);
  ValueId r = c.g.add_value("r");
  NodeId iff = c.g.add_node(OpType::onnx("If"), {cond}, std::vector<ValueId>{r}, {attr}, "if");
  c.g.add_output(r);
  ASSERT_EQ(c.g.node(iff).implicit_inputs.size(), 1u);
  EXPECT_EQ(c.g.value(c.a).uses.size(), 2u);
  c.g.verify();
  // Replacing the outer value re-points the capture.
  c.g.replace_all_uses(c.a, c.x);
  EXPECT_EQ(body->value(cap).captured_from, c.x);
  EXPECT_EQ(c.g.node(iff).implicit_inputs[0], c.x);
  c.g.verify();
}

TEST(Tensor, WrongDataSizeIsBadInput) {
  auto buf = make_aligned_buffer(8);
  EXPECT_THROW(Tensor(DataType::Float, {3}, buf), Error);
  Tensor ok(DataType::Float, {2}, buf);
  EXPECT_EQ(ok.nbytes(), 8u);
}
