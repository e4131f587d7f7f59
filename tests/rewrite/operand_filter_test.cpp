// The operand-op prefilter (engine/rewrite/operand_filter.h) is a necessary condition of the
// matcher: over random graphs built from the ops the rules mention, it never rejects a node that
// match_rule accepts, and it does reject most of the nodes a deep pattern cannot match.
#include <gtest/gtest.h>

#include <random>

#include "dsl/rules.h"
#include "dsl/lower.h"
#include "engine/rewrite/match.h"
#include "engine/rewrite/normalize.h"
#include "engine/rewrite/operand_filter.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

const char* kRules = R"(fusor-rules 1
rule add_of_mul
  match { y = Add(Mul(x, s), b) }
  where { const(s, b) }
  rewrite { y = Add(Mul(x, s), b) }
rule relu_of_alt
  match { y = Relu(Sigmoid | Tanh (x)) }
  rewrite { y = Relu(x) }
rule mul_self_sigmoid
  match { y = Mul(x, Sigmoid(x)) }
  rewrite { y = Mul(x, Sigmoid(x)) }
rule sub_of_two
  match { y = Sub(Exp(a), Neg(b)) }
  rewrite { y = Sub(Exp(a), Neg(b)) }
rule leaf_only
  match { y = Neg(x) }
  rewrite { y = x }
)";

std::vector<Rule> rules() {
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules_from_text("t.rules", kRules, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  std::vector<Rule> out = lower_rules(set.rules, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return out;
}

// A random DAG of unary and binary float ops over one input and a few scalar constants.
void random_graph(GB& b, uint32_t seed, int n) {
  std::mt19937 rng(seed);
  const char* unary[] = {"Relu", "Sigmoid", "Tanh", "Exp", "Neg"};
  const char* binary[] = {"Add", "Mul", "Sub"};
  std::vector<ValueId> vals = {b.input("x", {4}), b.scalar("k0", 2.f), b.scalar("k1", 0.5f)};
  for (int i = 0; i < n; ++i) {
    auto pick = [&] { return vals[rng() % vals.size()]; };
    std::string name = "n";  // appended piecewise: GCC 12 warns falsely on "n" + to_string
    name += std::to_string(i);
    if (rng() % 2) vals.push_back(b.node(unary[rng() % 5], {pick()}, name));
    else vals.push_back(b.node(binary[rng() % 3], {pick(), pick()}, name));
  }
  b.output(vals.back());
}

}  // namespace

TEST(OperandFilter, NeverRejectsAMatchAndPrunesMost) {
  const std::vector<Rule> rs = rules();
  ASSERT_EQ(rs.size(), 5u);
  std::vector<CompiledRule> compiled;
  std::vector<OperandFilter> filters;
  for (size_t i = 0; i < rs.size(); ++i) {
    compiled.push_back(compile_rule(rs[i], static_cast<int>(i)));
    filters.emplace_back(rs[i].pattern);
  }
  EXPECT_TRUE(filters[4].empty());  // a leaf-only pattern has nothing to prefilter
  size_t matches = 0, root_hits = 0, pruned = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    GB b;
    random_graph(b, seed, 60);
    NormCache norm(b.g);
    MatchEnv env{b.g, norm, 17};
    OperandOps ops;
    for (NodeId n : b.g.order()) {
      operand_ops(b.g, b.g.node(n), ops);
      for (size_t r = 0; r < rs.size(); ++r) {
        const auto& root_ops = rs[r].pattern.nodes[rs[r].pattern.root].ops;
        if (std::find(root_ops.begin(), root_ops.end(), b.g.node(n).op) == root_ops.end()) continue;
        ++root_hits;
        Match m;
        const bool matched = match_rule(compiled[r], env, n, m);
        const bool may = filters[r].may_match(ops);
        matches += matched;
        pruned += !may;
        EXPECT_TRUE(!matched || may) << rs[r].name << " at " << b.g.node(n).name << " (seed " << seed << ")";
      }
    }
  }
  EXPECT_GT(matches, 20u);             // the property is exercised on real matches
  EXPECT_GT(pruned * 2, root_hits);    // and the filter does prune: most root hits go no further
}
