// Every example of the design brief (../shared/docs/rules-language.md), copied into
// tests/dsl/fixtures/brief_examples.rules, must parse and check without a diagnostic, and the
// AST must say what the text says.
#include <gtest/gtest.h>

#include "dsl/rules.h"

using namespace fusor::dsl;

namespace {

const std::string kFixture = std::string(FUSOR_SOURCE_DIR) + "/tests/dsl/fixtures/brief_examples.rules";

class BriefExamples : public ::testing::Test {
 protected:
  void SetUp() override {
    rules_ = load_rules({kFixture}, {}, diags_);
    ASSERT_FALSE(diags_.has_errors()) << diags_.str();
  }
  const RuleDecl& rule(const std::string& name) {
    const RuleDecl* r = rules_.find_rule(name);
    EXPECT_NE(r, nullptr) << name;
    return *r;
  }
  Diagnostics diags_;
  RuleSet rules_;
};

TEST_F(BriefExamples, AllRulesCheckCleanly) {
  EXPECT_TRUE(diags_.empty()) << diags_.str();
  ASSERT_EQ(rules_.rules.size(), 6u);
  std::vector<std::string> names;
  for (const RuleDecl* r : rules_.rules) names.push_back(r->name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv_bn_fold", "conv_activation", "gelu_erf", "layer_norm",
                                             "matmul_add_to_gemm", "transpose_pair"}));
  EXPECT_EQ(rules_.opset, 17);
}

TEST_F(BriefExamples, ConvBnFold) {
  const RuleDecl& r = rule("conv_bn_fold");
  EXPECT_EQ(r.level, fusor::OptLevel::Extended);
  EXPECT_EQ(r.loc.line, 6u);
  ASSERT_EQ(r.match.size(), 2u);
  const auto* conv = r.match[0].value->dyn<CallExpr>();
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->call_kind, CallKind::Op);
  EXPECT_EQ(conv->ops[0].name, "Conv");
  ASSERT_EQ(conv->args.size(), 3u);
  const auto* b = conv->args[2]->dyn<OptionalExpr>();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->name, "b");
  EXPECT_EQ(b->loc.line, 9u);
  EXPECT_EQ(b->loc.col, 20u);
  // where { const(...) && rank(w) == 4 }
  ASSERT_EQ(r.where.size(), 1u);
  const auto* conj = r.where[0]->dyn<BinaryExpr>();
  ASSERT_NE(conj, nullptr);
  EXPECT_EQ(conj->op, BinaryOp::And);
  const auto* cst = conj->lhs->dyn<CallExpr>();
  ASSERT_NE(cst, nullptr);
  EXPECT_EQ(cst->call_kind, CallKind::Builtin);
  EXPECT_EQ(cst->args.size(), 6u);
  // rewrite: y = Conv <...c> (x, Mul(w, Reshape(k, [-1, 1, 1, 1])), Add(Mul(Sub(b ?? 0.0, mean), k), shift))
  ASSERT_EQ(r.rewrite.size(), 2u);
  const auto* conv2 = r.rewrite[1].value->dyn<CallExpr>();
  ASSERT_NE(conv2, nullptr);
  ASSERT_EQ(conv2->attrs.size(), 1u);
  EXPECT_TRUE(conv2->attrs[0].spread);
  EXPECT_EQ(conv2->attrs[0].name, "c");
  const auto* mul = conv2->args[1]->dyn<CallExpr>();
  const auto* reshape = mul->args[1]->dyn<CallExpr>();
  const auto* shape = reshape->args[1]->dyn<ListExpr>();
  ASSERT_NE(shape, nullptr);
  ASSERT_EQ(shape->elements.size(), 4u);
  EXPECT_EQ(shape->elements[0]->dyn<IntExpr>()->value, -1);
  const auto* sub = conv2->args[2]->dyn<CallExpr>()->args[0]->dyn<CallExpr>()->args[0]->dyn<CallExpr>();
  const auto* coalesce = sub->args[0]->dyn<CoalesceExpr>();
  ASSERT_NE(coalesce, nullptr);
  EXPECT_EQ(coalesce->fallback->dyn<FloatExpr>()->value, 0.0);
  // k = Div(scale, Sqrt(Add(var, y.epsilon)))
  const auto* add = r.rewrite[0].value->dyn<CallExpr>()->args[1]->dyn<CallExpr>()->args[0]->dyn<CallExpr>();
  const auto* eps = add->args[1]->dyn<AttrReadExpr>();
  ASSERT_NE(eps, nullptr);
  EXPECT_EQ(eps->base, "y");
  EXPECT_EQ(eps->attr, "epsilon");
}

TEST_F(BriefExamples, ConvActivationAlternation) {
  const RuleDecl& r = rule("conv_activation");
  const auto* act = r.match[1].value->dyn<CallExpr>();
  ASSERT_EQ(act->ops.size(), 6u);
  EXPECT_EQ(act->ops[5].name, "HardSigmoid");
  const auto* fused = r.rewrite[0].value->dyn<CallExpr>();
  EXPECT_EQ(fused->ops[0].domain, "fusor");
  EXPECT_EQ(fused->ops[0].name, "FusedConv");
  ASSERT_EQ(fused->attrs.size(), 3u);
  EXPECT_EQ(fused->attrs[1].name, "activation");
  EXPECT_EQ(fused->attrs[1].value->dyn<AttrReadExpr>()->attr, "op");
  EXPECT_EQ(fused->attrs[2].value->dyn<AttrReadExpr>()->attr, "attrs");
}

TEST_F(BriefExamples, LiteralsAndNesting) {
  const RuleDecl& g = rule("gelu_erf");
  const auto* outer = g.match[0].value->dyn<CallExpr>();
  EXPECT_EQ(outer->args[1]->dyn<FloatExpr>()->value, 0.5);
  const auto* div = outer->args[0]->dyn<CallExpr>()->args[1]->dyn<CallExpr>()->args[0]->dyn<CallExpr>()->args[0]->dyn<CallExpr>();
  EXPECT_EQ(div->ops[0].name, "Div");
  EXPECT_DOUBLE_EQ(div->args[1]->dyn<FloatExpr>()->value, 1.4142135);

  const RuleDecl& ln = rule("layer_norm");
  const auto* rm = ln.match[0].value->dyn<CallExpr>();
  ASSERT_EQ(rm->attrs.size(), 1u);
  EXPECT_EQ(rm->attrs[0].name, "axes");
  EXPECT_EQ(rm->attrs[0].value->dyn<ListExpr>()->elements[0]->dyn<IntExpr>()->value, -1);
  const auto* out = ln.rewrite[0].value->dyn<CallExpr>();
  EXPECT_EQ(out->attrs[0].value->dyn<IntExpr>()->value, -1);
  EXPECT_EQ(out->attrs[1].value->dyn<CallExpr>()->call_kind, CallKind::Builtin);
}

TEST_F(BriefExamples, TransposePairForwards) {
  const RuleDecl& r = rule("transpose_pair");
  EXPECT_EQ(r.level, fusor::OptLevel::Basic);
  ASSERT_EQ(r.rewrite.size(), 1u);
  EXPECT_EQ(r.rewrite[0].value->dyn<NameExpr>()->name, "x");
  const auto* eq = r.where[0]->dyn<BinaryExpr>();
  EXPECT_EQ(eq->op, BinaryOp::Eq);
  EXPECT_EQ(eq->lhs->dyn<CallExpr>()->callee(), "compose");
  EXPECT_EQ(eq->rhs->dyn<CallExpr>()->args[0]->dyn<CallExpr>()->callee(), "rank");
}

// The brief says `LayerNormalization` exists from opset 17 only: checked at 16 it is an
// error, unless the rule guards itself with opset().
TEST(BriefOpset, LayerNormalizationNeedsOpset17) {
  const std::string text =
      "fusor-rules 1\n"
      "rule ln\n"
      "  match { y = Relu(x) }\n"
      "  rewrite { y = LayerNormalization(x, x) }\n";
  Diagnostics d16;
  load_rules_from_text("ln.rules", text, CheckOptions{16}, d16);
  EXPECT_TRUE(d16.has_errors());
  EXPECT_NE(d16.str().find("ln.rules:4:17: error: op 'LayerNormalization' does not exist at opset 16"), std::string::npos)
      << d16.str();

  Diagnostics d17;
  load_rules_from_text("ln.rules", text, CheckOptions{17}, d17);
  EXPECT_FALSE(d17.has_errors()) << d17.str();

  std::string guarded = text;
  guarded.insert(guarded.find("  rewrite"), "  where { opset() >= 17 }\n");
  Diagnostics dg;
  load_rules_from_text("ln.rules", guarded, CheckOptions{13}, dg);
  EXPECT_FALSE(dg.has_errors()) << dg.str();
}

// An attribute a later opset added (BatchNormalization's training_mode, opset 14) can be matched and
// read when the rules are checked at an older opset (older nodes read as its default); a rewrite
// writing it there is an error that names the opset, unless an opset guard lifts the rule.
TEST(BriefOpset, LaterAttributeReadableButNotWritableAtAnOlderOpset) {
  const std::string reads =
      "fusor-rules 1\n"
      "rule bn\n"
      "  match { y = BatchNormalization <training_mode = 0> (x, s, b, m, v) }\n"
      "  where { y.training_mode == 0 }\n"
      "  rewrite { y = x }\n";
  Diagnostics d13;
  load_rules_from_text("bn.rules", reads, CheckOptions{13}, d13);
  EXPECT_FALSE(d13.has_errors()) << d13.str();

  const std::string writes =
      "fusor-rules 1\n"
      "rule bn\n"
      "  match { y = BatchNormalization(x, s, b, m, v) }\n"
      "  rewrite { y = BatchNormalization <training_mode = 0> (x, s, b, m, v) }\n";
  Diagnostics w13;
  load_rules_from_text("bn.rules", writes, CheckOptions{13}, w13);
  EXPECT_TRUE(w13.has_errors());
  EXPECT_NE(w13.str().find("bn.rules:4:37: error: attribute 'training_mode' of BatchNormalization exists from opset 14"),
            std::string::npos)
      << w13.str();
  Diagnostics w14;
  load_rules_from_text("bn.rules", writes, CheckOptions{14}, w14);
  EXPECT_FALSE(w14.has_errors()) << w14.str();

  std::string misspelt = reads;
  misspelt.replace(misspelt.find("y.training_mode"), 15, "y.training_mod");
  Diagnostics dm;
  load_rules_from_text("bn.rules", misspelt, CheckOptions{13}, dm);
  EXPECT_NE(dm.str().find("has no attribute 'training_mod'"), std::string::npos) << dm.str();
}

}  // namespace

namespace {

// Rules of the kinds issues 5, 6 and 7 ask for must check without a diagnostic.
TEST(IssueExamples, CheckCleanly) {
  fusor::dsl::Diagnostics d;
  fusor::dsl::RuleSet rs =
      fusor::dsl::load_rules({std::string(FUSOR_SOURCE_DIR) + "/tests/dsl/fixtures/issue_examples.rules"}, {}, d);
  EXPECT_TRUE(d.empty()) << d.str();
  EXPECT_GE(rs.rules.size(), 25u);
}

}  // namespace
