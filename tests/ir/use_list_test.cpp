// Use lists under heavy edits: a constant feeding thousands of nodes (as initializer_dedup makes
// of a shared scalar) loses its consumers in random order and through set_input; after every
// batch the use list holds exactly the live consumers and verify() (which checks each node's
// recorded use position) passes. Removal is O(1) per use (Graph::drop_use), which the optimizer
// scaling benchmark (bench/rule_scaling) measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "core/ir/graph.h"

using namespace fusor;

namespace {

std::multiset<std::pair<NodeId, int32_t>> uses_of(const Graph& g, ValueId v) {
  std::multiset<std::pair<NodeId, int32_t>> s;
  for (const Use& u : g.value(v).uses) s.insert({u.node, u.slot});
  return s;
}

}  // namespace

TEST(UseLists, HighFanoutConstantSurvivesRandomRemovalAndRewiring) {
  Graph g;
  g.name = "fanout";
  const ValueType t = ValueType::tensor(DataType::Float, {4});
  ValueId x = g.add_value("x", t);
  g.add_input(x);
  ValueId k = g.add_initializer("k", Tensor::scalar<float>(2.f));
  ValueId k2 = g.add_initializer("k2", Tensor::scalar<float>(3.f));
  std::vector<NodeId> nodes;
  for (int i = 0; i < 3000; ++i) {
    std::string name = "m";
    name += std::to_string(i);
    // Every other node uses k twice (Mul(k, k)): two uses of one node in one list.
    std::vector<ValueId> in = i % 2 ? std::vector<ValueId>{x, k} : std::vector<ValueId>{k, k};
    ValueId out = g.add_value(name);
    nodes.push_back(g.add_node(OpType::onnx("Mul"), in, std::vector<ValueId>{out}, {}, name));
  }
  ASSERT_EQ(g.value(k).uses.size(), 4500u);
  std::mt19937 rng(5);
  std::shuffle(nodes.begin(), nodes.end(), rng);
  std::multiset<std::pair<NodeId, int32_t>> want = uses_of(g, k);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeId n = nodes[i];
    if (i % 3 == 0) {
      // Rewire slot 1 to k2.
      g.set_input(n, 1, k2);
      want.erase(want.find({n, 1}));
    } else if (i % 3 == 1) {
      for (int32_t s = 0; s < 2; ++s)
        if (g.node(n).inputs[s] == k) want.erase(want.find({n, s}));
      g.remove_node(n);
    }
    if (i % 250 == 0) {
      EXPECT_EQ(uses_of(g, k), want) << "after " << i << " edits";
      EXPECT_NO_THROW(g.verify());
    }
  }
  EXPECT_EQ(uses_of(g, k), want);
  EXPECT_NO_THROW(g.verify());
}
