// rules/extended/gather_rows.rules with the whole extended set: a row selection at the end of a
// row-wise chain (a classifier reading one token) moves to its start, so the chain runs on the
// selected rows; a selection that repeats rows, or one along the last axis, stays where it is.
#include "shipped_rules.h"

using namespace fusor;
using namespace fusor::test;

namespace {

Tensor weights(Shape shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  Tensor t(DataType::Float, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

// x [1, 9, 16] -> MatMul + bias -> Relu -> MatMul + bias -> + x (residual) -> LayerNormalization
// -> Gather(indices, axis). Records x's id in the graph built last (the rewritten one).
void chain(GB& b, ValueId& x, const std::vector<int64_t>& indices, int64_t axis, bool scalar_index) {
  x = b.input("x", {1, 9, 16});
  ValueId h = b.node("Add", {b.node("MatMul", {x, b.init("w1", weights({16, 32}, 1))}, "fc1"), b.init("b1", weights({32}, 2))},
                     "fc1_bias");
  h = b.node("Relu", {h}, "act");
  ValueId y = b.node("Add", {b.node("MatMul", {h, b.init("w2", weights({32, 16}, 3))}, "fc2"), b.init("b2", weights({16}, 4))},
                     "fc2_bias");
  y = b.node("Add", {y, x}, "residual");
  y = b.node("LayerNormalization", {y, b.init("gamma", weights({16}, 5)), b.init("beta", weights({16}, 6))}, "ln",
             {Attribute::make_int("axis", -1)});
  ValueId idx = scalar_index ? b.init("idx", Tensor::scalar<int64_t>(indices[0])) : b.ivec("idx", indices);
  b.output(b.node("Gather", {y, idx}, "select", {Attribute::make_int("axis", axis)}));
}

// Nodes other than Gather that read x directly (after the rewrite: none when the selection moved up).
int readers_of_x_other_than_gather(const GB& g, ValueId x) {
  int n = 0;
  for (NodeId id : g.g.order()) {
    const Node& node = g.g.node(id);
    if (node.op == OpType("", "Gather")) continue;
    for (ValueId in : node.inputs) n += in == x;
  }
  return n;
}

TEST(GatherRowsRules, ClassTokenRunsTheChainOnOneRow) {
  ValueId x;
  auto f = fuse([&](GB& b) { chain(b, x, {0}, 1, true); }, {{"x", {1, 9, 16}}});
  EXPECT_EQ(readers_of_x_other_than_gather(f->graph, x), 0) << f->graph.dump();
  EXPECT_GT(f->fired("gather_before_fused_matmul") + f->fired("gather_before_matmul"), 0) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

TEST(GatherRowsRules, SeveralRowsMoveToo) {
  ValueId x;
  auto f = fuse([&](GB& b) { chain(b, x, {8, 0, 3}, 1, false); }, {{"x", {1, 9, 16}}});
  EXPECT_EQ(readers_of_x_other_than_gather(f->graph, x), 0) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

// More indices than rows (an expansion, as an embedding lookup may do): moving it up would compute
// the chain on 12 rows instead of 9.
TEST(GatherRowsRules, RepeatedRowsStayBelow) {
  ValueId x;
  auto f = fuse([&](GB& b) { chain(b, x, {0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2}, 1, false); }, {{"x", {1, 9, 16}}});
  EXPECT_GT(readers_of_x_other_than_gather(f->graph, x), 0) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

// Along the last axis the Gather cuts the rows themselves: nothing moves.
TEST(GatherRowsRules, LastAxisStays) {
  ValueId x;
  auto f = fuse([&](GB& b) { chain(b, x, {0, 5}, 2, false); }, {{"x", {1, 9, 16}}});
  EXPECT_GT(readers_of_x_other_than_gather(f->graph, x), 0) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

}  // namespace
