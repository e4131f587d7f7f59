// The test-block runner (engine/ruletest/rule_tests.h): a correct rule passes with a zero
// difference, a rule that changes the result is reported failing by name with the difference it
// met, a rule that does not fire on its own test is reported with the matcher's reason, and a
// rule without a test fails only when tests are required.
#include <gtest/gtest.h>

#include "dsl/rules.h"
#include "engine/ruletest/rule_tests.h"

using namespace fusor;
using namespace fusor::ruletest;

namespace {

dsl::RuleSet load(const std::string& text) {
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules_from_text("t.rules", "fusor-rules 1\n" + text, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return set;
}

const TestResult* find(const std::vector<TestResult>& rs, const std::string& rule) {
  for (const TestResult& r : rs)
    if (r.rule == rule) return &r;
  return nullptr;
}

}  // namespace

TEST(RuleTests, CorrectRulePasses) {
  auto set = load(R"(
rule identity_gone
  match { y = Identity(x) }
  rewrite { y = x }
  test plain { x: float[2, 3] }
)");
  auto rs = run_tests(set, {});
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].outcome, Outcome::Pass) << rs[0].message;
  EXPECT_FALSE(rs[0].failed);
  EXPECT_EQ(rs[0].rule, "identity_gone");
  EXPECT_EQ(rs[0].test, "plain");
  EXPECT_EQ(rs[0].location, "t.rules:6");
  EXPECT_EQ(rs[0].fired, 1);
  EXPECT_TRUE(rs[0].measured);
  EXPECT_EQ(rs[0].diff.error, 0.0);
  EXPECT_EQ(rs[0].nodes_before, 2);  // Identity and the sink (Neg: the rule matches Identity)
  EXPECT_EQ(rs[0].nodes_after, 1);
}

TEST(RuleTests, WrongRuleIsNamedWithItsDifference) {
  // y = x + 1 rewritten to y = x: every output is off by exactly 1, so the measure
  // |after - before| / max(1, |before|) is 1 / max(1, |x + 1|) with x + 1 in [0, 2).
  auto set = load(R"(
rule add_one_dropped
  match { y = Add(x, 1.0) }
  rewrite { y = x }
  test wrong { x: float[4, 5] }
rule identity_gone
  match { y = Identity(x) }
  rewrite { y = x }
  test { x: float[3] }
)");
  auto rs = run_tests(set, {});
  ASSERT_EQ(rs.size(), 2u);
  const TestResult* bad = find(rs, "add_one_dropped");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->outcome, Outcome::Mismatch);
  EXPECT_TRUE(bad->failed);
  EXPECT_EQ(bad->test, "wrong");
  EXPECT_EQ(bad->fired, 1);
  EXPECT_NEAR(bad->diff.max_abs, 1.0, 1e-6);
  EXPECT_GT(bad->diff.error, 0.5);
  EXPECT_LE(bad->diff.error, 1.0 + 1e-6);
  EXPECT_NE(bad->message.find("output 'y'"), std::string::npos) << bad->message;
  const TestResult* good = find(rs, "identity_gone");
  ASSERT_NE(good, nullptr);
  EXPECT_FALSE(good->failed) << good->message;
}

TEST(RuleTests, ToleranceOfTheTestBlockWins) {
  // A rule that is off by a small amount: x * 1.001 -> x. The difference is at most 1e-3
  // relative; tolerance 1e-2 in the block lets it pass, the default 1e-4 does not.
  auto set = load(R"(
rule almost
  match { y = Mul(x, 1.001) }
  rewrite { y = x }
  test loose { x: float[8]; tolerance 1e-2 }
  test strict { x: float[8] }
)");
  auto rs = run_tests(set, {});
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].test, "loose");
  EXPECT_EQ(rs[0].outcome, Outcome::Pass) << rs[0].message;
  EXPECT_EQ(rs[0].tolerance, 1e-2);
  EXPECT_EQ(rs[1].test, "strict");
  EXPECT_EQ(rs[1].outcome, Outcome::Mismatch);
  EXPECT_GT(rs[1].diff.error, 1e-4);
  EXPECT_LE(rs[1].diff.error, 1.01e-3);
  // --tolerance moves the default for blocks that give none.
  TestOptions opts;
  opts.tolerance = 2e-3;
  auto rs2 = run_tests(set, opts);
  EXPECT_EQ(rs2[1].outcome, Outcome::Pass) << rs2[1].message;
}

TEST(RuleTests, RuleThatDoesNotFireIsReportedWithTheReason) {
  auto set = load(R"(
rule only_rank3
  match { y = Transpose(x) }
  where { rank(x) == 3 }
  rewrite { y = x }
  test { x: float[2, 3] }
)");
  auto rs = run_tests(set, {});
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].outcome, Outcome::NotFired);
  EXPECT_TRUE(rs[0].failed);
  EXPECT_EQ(rs[0].rule, "only_rank3");
  EXPECT_EQ(rs[0].fired, 0);
  EXPECT_NE(rs[0].message.find("rank"), std::string::npos) << rs[0].message;
}

TEST(RuleTests, MissingTestFailsOnlyWhenRequired) {
  auto set = load(R"(
rule untested
  match { y = Identity(x) }
  rewrite { y = x }
)");
  auto rs = run_tests(set, {});
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].outcome, Outcome::NoTest);
  EXPECT_FALSE(rs[0].failed);
  TestOptions req;
  req.require_tests = true;
  rs = run_tests(set, req);
  EXPECT_EQ(rs[0].outcome, Outcome::NoTest);
  EXPECT_TRUE(rs[0].failed);
  EXPECT_EQ(rs[0].location, "t.rules:3");
}

TEST(RuleTests, TestThatCannotBeBuiltIsAnError) {
  // A permutation of rank 3 for a rank-2 input: ONNX's inference rejects the node.
  auto set = load(R"(
rule transpose_twice
  match { t = Transpose(x)
          y = Transpose(t) }
  rewrite { y = Transpose <perm = compose(t.perm, y.perm)> (x) }
  test { x: float[2, 3]; t.perm = [0, 2, 1] }
)");
  auto rs = run_tests(set, {});
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].outcome, Outcome::Error);
  EXPECT_TRUE(rs[0].failed);
  EXPECT_NE(rs[0].message.find("Transpose"), std::string::npos) << rs[0].message;
}

TEST(RuleTests, WeightFoldsResolveThroughConstantFolding) {
  // Mul(Mul(x, a), b) -> Mul(x, Mul(a, b)) with constant a, b: the new Mul(a, b) is folded.
  auto set = load(R"(
rule scale_chain
  match { t = Mul(x, a)
          y = Mul(t, b) }
  where { const(a, b) }
  rewrite { y = Mul(x, Mul(a, b)) }
  test { x: float[2, 4]; a: const float[4]; b: const float[] = 3.0 }
)");
  auto rs = run_tests(set, {});
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].outcome, Outcome::Pass) << rs[0].message;
  EXPECT_EQ(rs[0].nodes_before, 3);  // with the sink
  EXPECT_EQ(rs[0].nodes_after, 2);
  EXPECT_LE(rs[0].diff.error, 1e-6);
}

TEST(RuleTests, SameSeedSameDifference) {
  auto set = load(R"(
rule add_one_dropped
  match { y = Add(x, 1.0) }
  rewrite { y = x }
  test { x: float[16] }
)");
  TestOptions a, b;
  b.seed = 5;
  auto r1 = run_tests(set, a), r2 = run_tests(set, a), r3 = run_tests(set, b);
  EXPECT_EQ(r1[0].diff.error, r2[0].diff.error);
  EXPECT_EQ(r1[0].diff.worst, r2[0].diff.worst);
  EXPECT_NE(r1[0].diff.worst, r3[0].diff.worst);
}
