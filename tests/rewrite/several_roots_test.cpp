// Patterns with several roots sharing an input (engine/rewrite/match.h): the matcher finds the
// other roots among the consumers of a value it bound, each pattern node on a different graph node,
// trying every candidate until the where clause holds.
#include <gtest/gtest.h>

#include "dsl/lower.h"
#include "dsl/rules.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

std::vector<Rule> rules_from(const std::string& text) {
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules_from_text("t.rules", "fusor-rules 1\n" + text, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  std::vector<Rule> rules = lower_rules(set.rules, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return rules;
}

TEST(SeveralRoots, SiblingsOfOneInputAreFoundFromEitherRoot) {
  auto rules = rules_from(R"(
rule pair
  match { a = Relu(x)
          b = Sigmoid(x) }
  rewrite { a = Abs(x)
            b = Tanh(x) }
)");
  ASSERT_EQ(rules.size(), 1u);
  GB b;
  ValueId x = b.input("x", {4});
  b.output(b.node("Relu", {x}, "r"));
  b.output(b.node("Neg", {x}, "other"));
  b.output(b.node("Sigmoid", {x}, "s"));
  RewriteReport rep = run_rewrites(b.g, rules, {}, 17);
  b.g.verify();
  EXPECT_EQ(rep.rules_fired["pair"], 1);
  EXPECT_EQ(b.count("Relu"), 0);
  EXPECT_EQ(b.count("Sigmoid"), 0);
  EXPECT_EQ(b.count("Abs"), 1);
  EXPECT_EQ(b.count("Tanh"), 1);
  EXPECT_EQ(b.count("Neg"), 1);
}

TEST(SeveralRoots, EachPatternNodeIsADifferentNode) {
  // Two identical roots need two Relus of x: one Relu alone does not match twice.
  auto rules = rules_from(R"(
rule two_relus
  match { a = Relu(x)
          b = Relu(x) }
  rewrite { a = Abs(x)
            b = Abs(x) }
)");
  for (int relus : {1, 2}) {
    GB b;
    ValueId x = b.input("x", {4});
    for (int i = 0; i < relus; ++i) {
      std::string name = std::to_string(i);  // "r" + to_string(i) trips a GCC 12 -Wrestrict false positive
      name.insert(name.begin(), 'r');
      b.output(b.node("Relu", {x}, name));
    }
    RewriteReport rep = run_rewrites(b.g, rules, {}, 17);
    b.g.verify();
    EXPECT_EQ(rep.rules_fired["two_relus"], relus == 2 ? 1 : 0) << relus;
    EXPECT_EQ(b.count("Relu"), relus == 2 ? 0 : 1) << relus;
  }
}

TEST(SeveralRoots, EveryCandidateIsTriedUntilTheWhereClauseHolds) {
  // Three Slices of x; only the pair covering it exactly ([0, 3) and [3, 8)) is a Split.
  auto rules = rules_from(R"(
rule halves
  level extended
  match { a = Slice(x, sa, ea, ax)
          b = Slice(x, sb, eb, ax2) }
  where { const(sa, ea, ax, sb, eb, ax2) && value(sa) == [0] && value(sb) == value(ea) && value(eb) == [8] &&
          value(ax) == value(ax2) }
  rewrite { a, b = Split <axis = 1> (x, [value(ea)[0], 8 - value(ea)[0]]) }
)");
  GB b;
  ValueId x = b.input("x", {2, 8});
  auto ints = [&](const std::string& n, int64_t v) { return b.init(n, Tensor::from_vector<int64_t>({1}, {v})); };
  b.output(b.node("Slice", {x, ints("s0", 3), ints("e0", 8), ints("a0", 1)}, "tail"));
  b.output(b.node("Slice", {x, ints("s1", 1), ints("e1", 2), ints("a1", 1)}, "middle"));
  b.output(b.node("Slice", {x, ints("s2", 0), ints("e2", 3), ints("a2", 1)}, "head"));
  RewriteReport rep = run_rewrites(b.g, rules, {}, 17);
  b.g.verify();
  EXPECT_EQ(rep.rules_fired["halves"], 1);
  EXPECT_EQ(b.count("Split"), 1);
  EXPECT_EQ(b.count("Slice"), 1);  // the middle one stays
}

TEST(SeveralRoots, RootsThroughIntermediateNodes) {
  // Each root is two nodes above the shared input: found by walking up x's consumers.
  auto rules = rules_from(R"(
rule two_chains
  match { a = Neg(Relu(x))
          b = Neg(Sigmoid(x)) }
  rewrite { a = Abs(x)
            b = Tanh(x) }
)");
  GB b;
  ValueId x = b.input("x", {4});
  b.output(b.node("Neg", {b.node("Sigmoid", {x}, "s")}, "ns"));
  b.output(b.node("Neg", {b.node("Relu", {x}, "r")}, "nr"));
  RewriteReport rep = run_rewrites(b.g, rules, {}, 17);
  b.g.verify();
  EXPECT_EQ(rep.rules_fired["two_chains"], 1);
  EXPECT_EQ(b.count("Neg"), 0);
}

}  // namespace
