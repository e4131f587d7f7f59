// `fusor explain`'s engine side (engine/rewrite/explain.h) and provider kernel gating
// (engine/rewrite/kernel_gate.h): rules lowered from text run on small graphs; the records say
// where the rule applied, which constraint failed at which node, and which matches the provider's
// kernel declarations cannot run.
#include <gtest/gtest.h>

#include "dsl/provider.h"
#include "dsl/rules.h"
#include "engine/rewrite/kernel_gate.h"
#include "dsl/lower.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

std::vector<Rule> rules_from(const std::string& text) {
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules_from_text("t.rules", "fusor-rules 1\n" + text, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  if (diags.has_errors()) return {};
  std::vector<Rule> rules = lower_rules(set.rules, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return rules;
}

std::unique_ptr<dsl::ProviderDef> provider_from(const std::string& name, const std::string& text) {
  dsl::Diagnostics diags;
  auto def = dsl::parse_provider_text(name + ".provider", text, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return def;
}

std::vector<const ExplainRecord*> of_kind(const RewriteReport& rep, ExplainKind k) {
  std::vector<const ExplainRecord*> out;
  for (const ExplainRecord& e : rep.explain)
    if (e.kind == k) out.push_back(&e);
  return out;
}

const ExplainRecord* at_root(const RewriteReport& rep, const std::string& root) {
  for (const ExplainRecord& e : rep.explain)
    if (e.root == root) return &e;
  return nullptr;
}

Tensor weights(Shape s) {
  Tensor t(DataType::Float, s);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = 0.01f * static_cast<float>(i % 7);
  return t;
}

const char* kConvAct = R"(
rule conv_act
  level extended
  match { c = Conv(x, w, b?)
          y = Relu | Sigmoid (c) }
  where { const(w, b) }
  rewrite { y = fusor.FusedConv <...c, activation = y.op, activation_params = y.attrs> (x, w, b) }
)";

// Runs conv_act on `g`, explaining it.
RewriteReport explain_conv_act(Graph& g, const KernelGate* gate = nullptr) {
  RewriteOptions opts;
  opts.explain_rule = "conv_act";
  opts.gate = gate;
  return run_rewrites(g, rules_from(kConvAct), opts, 17);
}

// x -> Conv(conv1) -> Relu(relu1) -> Conv(conv2) -> Sigmoid(sig2) -> out
struct ConvChain {
  GB b;
  ConvChain() {
    ValueId x = b.input("x", {1, 2, 5, 5});
    ValueId c1 = b.node("Conv", {x, b.init("w1", weights({2, 2, 3, 3}))}, "conv1",
                        {Attribute::make_ints("pads", {1, 1, 1, 1})});
    ValueId r1 = b.node("Relu", {c1}, "relu1");
    ValueId c2 = b.node("Conv", {r1, b.init("w2", weights({2, 2, 1, 1}))}, "conv2");
    b.output(b.node("Sigmoid", {c2}, "sig2"));
  }
};

}  // namespace

TEST(Explain, AppliedMatchesAreListedWithNodesLocationAndIteration) {
  ConvChain cc;
  RewriteReport rep = explain_conv_act(cc.b.g);
  EXPECT_EQ(cc.b.count("Conv"), 0);
  auto applied = of_kind(rep, ExplainKind::Applied);
  ASSERT_EQ(applied.size(), 2u);
  const ExplainRecord* r1 = at_root(rep, "relu1");
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r1->kind, ExplainKind::Applied);
  EXPECT_TRUE(r1->matched && r1->applied);
  EXPECT_EQ(r1->op, "Relu");
  EXPECT_EQ(r1->nodes, (std::vector<std::string>{"conv1", "relu1"}));
  EXPECT_EQ(r1->new_ops, std::vector<std::string>{OpType("fusor", "FusedConv").qualified()});
  EXPECT_EQ(r1->location, "t.rules:3");  // line 1: the version line, 2: blank
  EXPECT_EQ(r1->graph, "main");
  EXPECT_GT(r1->iteration, 0u);
  const ExplainRecord* s2 = at_root(rep, "sig2");
  ASSERT_NE(s2, nullptr);
  EXPECT_EQ(s2->nodes, (std::vector<std::string>{"conv2", "sig2"}));
  // Rewrites are numbered in the order they happened, and so are the loop's steps.
  EXPECT_NE(r1->rewrite_index, s2->rewrite_index);
  EXPECT_EQ(r1->rewrite_index < s2->rewrite_index, r1->iteration < s2->iteration);
}

TEST(Explain, NearMissAtAnInputNamesTheOpConstraintAndTheNodes) {
  GB b;
  ValueId x = b.input("x", {1, 2, 5, 5});
  ValueId t = b.node("Tanh", {x}, "tanh0");
  b.output(b.node("Relu", {t}, "relu0"));
  RewriteReport rep = explain_conv_act(b.g);
  ASSERT_EQ(rep.explain.size(), 1u);
  const ExplainRecord& e = rep.explain[0];
  EXPECT_EQ(e.kind, ExplainKind::NearMiss);
  EXPECT_EQ(e.root, "relu0");
  EXPECT_EQ(e.constraint, MissKind::Op);
  EXPECT_EQ(e.at_node, "tanh0");
  EXPECT_EQ(e.at_op, "Tanh");
  EXPECT_EQ(e.consumer, "relu0");
  EXPECT_EQ(e.consumer_input, 0);
  EXPECT_NE(e.reason.find("expected Conv"), std::string::npos) << e.reason;
}

TEST(Explain, NearMissOnTheWhereClauseShowsTheFailingConjunctAndItsOperands) {
  GB b;
  ValueId x = b.input("x", {1, 2, 5, 5});
  ValueId w = b.input("w_in", {2, 2, 3, 3});  // a graph input: not constant
  b.output(b.node("Relu", {b.node("Conv", {x, w}, "conv0")}, "relu0"));
  RewriteReport rep = explain_conv_act(b.g);
  ASSERT_EQ(rep.explain.size(), 1u);
  const ExplainRecord& e = rep.explain[0];
  EXPECT_EQ(e.kind, ExplainKind::NearMiss);
  EXPECT_EQ(e.constraint, MissKind::Where);
  EXPECT_NE(e.reason.find("const(w, b) is false"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("'w_in'"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("a graph input"), std::string::npos) << e.reason;
}

TEST(Explain, WhereArithmeticShowsEvaluatedOperandsAndUnknownDims) {
  auto rules = rules_from(R"(
rule wide_relu
  match { y = Relu(x) }
  where { rank(x) == 4 && shape(x)[1] % 8 == 0 }
  rewrite { y = Max(x, 0.0) }
)");
  GB b;
  b.output(b.node("Relu", {b.input("x", {1, 12, 4, 4})}, "relu12"));
  ValueId s = b.g.add_value("xs", ValueType::tensor(DataType::Float, {}));
  b.g.value(s).type.has_shape = true;
  b.g.value(s).type.dims = {Dim::known(1), Dim::symbol("C"), Dim::known(4), Dim::known(4)};
  b.g.add_input(s);
  b.output(b.node("Relu", {s}, "relu_sym"));
  RewriteOptions opts;
  opts.explain_rule = "wide_relu";
  RewriteReport rep = run_rewrites(b.g, rules, opts, 17);
  const ExplainRecord* e = at_root(rep, "relu12");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->constraint, MissKind::Where);
  EXPECT_NE(e->reason.find("shape(x)[1] % 8 == 0 is false"), std::string::npos) << e->reason;
  EXPECT_NE(e->reason.find("shape(x)[1] % 8 = 4"), std::string::npos) << e->reason;
  EXPECT_NE(e->reason.find("shape(x)[1] = 12"), std::string::npos) << e->reason;
  const ExplainRecord* u = at_root(rep, "relu_sym");
  ASSERT_NE(u, nullptr);
  EXPECT_NE(u->reason.find("is unknown"), std::string::npos) << u->reason;
  EXPECT_EQ(b.count("Relu"), 2);
}

TEST(Explain, OutsideUseOfAnIntermediateIsNamed) {
  GB b;
  ValueId x = b.input("x", {1, 2, 5, 5});
  ValueId c = b.node("Conv", {x, b.init("w", weights({2, 2, 1, 1}))}, "conv0");
  b.output(b.node("Relu", {c}, "relu0"));
  b.output(b.node("Neg", {c}, "neg0"));  // a second consumer of the Conv's output
  RewriteReport rep = explain_conv_act(b.g);
  ASSERT_EQ(rep.explain.size(), 1u);
  const ExplainRecord& e = rep.explain[0];
  EXPECT_EQ(e.constraint, MissKind::OutsideUse);
  EXPECT_EQ(e.at_node, "conv0");
  EXPECT_NE(e.reason.find("neg0"), std::string::npos) << e.reason;
}

TEST(Explain, PreemptedByAHigherPriorityRule) {
  auto rules = rules_from(std::string(kConvAct) + R"(
rule relu_as_max
  match { y = Relu(x) }
  rewrite { y = Max(x, 0.0) }
)");
  GB b;
  ValueId x = b.input("x", {1, 2, 5, 5});
  ValueId r = b.node("Relu", {b.node("Conv", {x, b.init("w", weights({2, 2, 1, 1}))}, "conv0")}, "relu0");
  b.output(b.node("Relu", {r}, "relu1"));  // not after a Conv: relu_as_max applies here
  RewriteOptions opts;
  opts.explain_rule = "relu_as_max";
  RewriteReport rep = run_rewrites(b.g, rules, opts, 17);
  const ExplainRecord* e0 = at_root(rep, "relu0");
  ASSERT_NE(e0, nullptr);
  EXPECT_EQ(e0->kind, ExplainKind::Preempted);
  EXPECT_EQ(e0->by_rule, "conv_act");
  const ExplainRecord* e1 = at_root(rep, "relu1");
  ASSERT_NE(e1, nullptr);
  EXPECT_EQ(e1->kind, ExplainKind::Applied);
}

// ---- provider kernel gating ----

const char* kClampProvider = R"(fusor-provider 1
layout NCHW
kernels {
  Conv; Relu; Sigmoid
  fusor.FusedConv where activation in ["", Relu, Clip]
}
)";

TEST(KernelGate, ARewriteTheProviderCannotRunIsSkippedAndExplained) {
  ConvChain cc;
  auto def = provider_from("clamp", kClampProvider);
  KernelTable table = def->kernel_table();
  KernelGate gate(table);
  RewriteReport rep = explain_conv_act(cc.b.g, &gate);
  cc.b.g.verify();
  // Conv+Relu fused (FusedConv with Relu is declared); Conv+Sigmoid left as it was.
  EXPECT_EQ(cc.b.count("Relu"), 0);
  EXPECT_EQ(cc.b.count("Conv"), 1);
  EXPECT_EQ(cc.b.count("Sigmoid"), 1);
  EXPECT_EQ(rep.skipped, 1);
  EXPECT_EQ(rep.rules_fired["conv_act"], 1);
  const ExplainRecord* s = at_root(rep, "sig2");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->kind, ExplainKind::Skipped);
  EXPECT_TRUE(s->matched);
  EXPECT_FALSE(s->applied);
  EXPECT_EQ(s->nodes, (std::vector<std::string>{"conv2", "sig2"}));
  EXPECT_NE(s->reason.find("provider 'clamp' has no kernel for fusor.FusedConv with activation = \"Sigmoid\""),
            std::string::npos)
      << s->reason;
  EXPECT_NE(s->reason.find("clamp.provider:5"), std::string::npos) << s->reason;
}

TEST(KernelGate, NoGateOrNoKernelsBlockRunsEverything) {
  for (bool with_def : {false, true}) {
    ConvChain cc;
    auto def = provider_from("any", "fusor-provider 1\nlayout NCHW\n");
    KernelTable table = def->kernel_table();
  KernelGate gate(table);
    EXPECT_FALSE(gate.restricts());
    RewriteReport rep = explain_conv_act(cc.b.g, with_def ? &gate : nullptr);
    EXPECT_EQ(cc.b.count("Conv"), 0) << with_def;
    EXPECT_EQ(rep.skipped, 0);
  }
}

TEST(KernelGate, ConstantOnlyNewNodesAreFoldedNotGated) {
  // Mul(w, s) on constants is folded; only the new Conv must be a declared kernel.
  auto rules = rules_from(R"(
rule conv_scale
  match { c = Conv(x, w)
          y = Mul(c, s) }
  where { const(w, s) && rank(s) == 0 }
  rewrite { y = Conv <...c> (x, Mul(w, s)) }
)");
  for (const char* kernels : {"Conv", "Relu"}) {
    GB b;
    ValueId x = b.input("x", {1, 2, 3, 3});
    ValueId c = b.node("Conv", {x, b.init("w", weights({2, 2, 1, 1}))}, "conv0");
    b.output(b.node("Mul", {c, b.scalar("s", 2.0f)}, "mul0"));
    auto def = provider_from("p", std::string("fusor-provider 1\nlayout NCHW\nkernels { ") + kernels + " }\n");
    KernelTable table = def->kernel_table();
  KernelGate gate(table);
    RewriteOptions opts;
    opts.gate = &gate;
    opts.explain_rule = "conv_scale";
    RewriteReport rep = run_rewrites(b.g, rules, opts, 17);
    bool conv_declared = std::string(kernels) == "Conv";
    EXPECT_EQ(b.count("Mul"), conv_declared ? 0 : 1) << kernels;
    ASSERT_EQ(rep.explain.size(), 1u);
    EXPECT_EQ(rep.explain[0].kind, conv_declared ? ExplainKind::Applied : ExplainKind::Skipped) << rep.explain[0].reason;
    if (!conv_declared) {
      EXPECT_NE(rep.explain[0].reason.find("provider 'p' has no kernel for Conv"), std::string::npos)
          << rep.explain[0].reason;
    }
  }
}

TEST(KernelGate, ConditionsReadRankAndDtype) {
  auto def = provider_from("r", R"(fusor-provider 1
layout NCHW
kernels {
  Relu where input_rank == 4 && input_dtype == float
}
)");
  KernelTable table = def->kernel_table();
  KernelGate gate(table);
  GB b;
  ValueId r4 = b.node("Relu", {b.input("a", {1, 2, 3, 3})}, "r4");
  ValueId r2 = b.node("Relu", {b.input("b", {3, 3})}, "r2");
  b.output(r4);
  b.output(r2);
  NormCache norm(b.g);
  MatchEnv env{b.g, norm, 17};
  EXPECT_EQ(gate.cannot_run(env, b.find("r4")), "");
  std::string why = gate.cannot_run(env, b.find("r2"));
  EXPECT_NE(why.find("input_rank = 2"), std::string::npos) << why;
}

TEST(KernelGate, ConditionsAreTheWhereLanguage) {
  // One expression language: built-ins over lists, and float attributes equal decimal literals
  // within the literal tolerance (alpha is stored as float32 0.2f).
  auto def = provider_from("e", R"(fusor-provider 1
layout NCHW
kernels {
  LeakyRelu where alpha == 0.2 && len([1, 2]) == 2
  MaxPool where len(kernel_shape) == 2 && kernel_shape[0] in [2, 3]
}
)");
  KernelTable table = def->kernel_table();
  KernelGate gate(table);
  GB b;
  ValueId x = b.input("x", {1, 2, 6, 6});
  b.output(b.node("LeakyRelu", {x}, "lr", {Attribute::make_float("alpha", 0.2f)}));
  b.output(b.node("LeakyRelu", {x}, "lr3", {Attribute::make_float("alpha", 0.3f)}));
  b.output(b.node("MaxPool", {x}, "mp", {Attribute::make_ints("kernel_shape", {3, 3})}));
  b.output(b.node("MaxPool", {x}, "mp4", {Attribute::make_ints("kernel_shape", {4, 4})}));
  NormCache norm(b.g);
  MatchEnv env{b.g, norm, 17};
  EXPECT_EQ(gate.cannot_run(env, b.find("lr")), "");
  EXPECT_EQ(gate.cannot_run(env, b.find("mp")), "");
  std::string why = gate.cannot_run(env, b.find("lr3"));
  EXPECT_NE(why.find("with alpha = 0.3"), std::string::npos) << why;
  why = gate.cannot_run(env, b.find("mp4"));
  EXPECT_NE(why.find("kernel_shape = [4, 4]"), std::string::npos) << why;
  EXPECT_NE(why.find("MaxPool where len(kernel_shape) == 2 && kernel_shape[0] in [2, 3] at"), std::string::npos) << why;
}

TEST(Explain, TwoRunsMergeWithTheSecondOutcomeWinningAndContinuedNumbering) {
  auto rec = [](const std::string& root, ExplainKind k, size_t it, size_t rw) {
    ExplainRecord e;
    e.graph = "main";
    e.root = root;
    e.kind = k;
    e.iteration = it;
    e.rewrite_index = rw;
    return e;
  };
  std::vector<ExplainRecord> first = {rec("a", ExplainKind::Applied, 3, 2), rec("b", ExplainKind::NearMiss, 5, 0)};
  std::vector<ExplainRecord> second = {rec("b", ExplainKind::Applied, 4, 1)};
  auto merged = merge_explain_runs(first, second, 10, 7);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].root, "a");
  EXPECT_EQ(merged[0].iteration, 3u);
  EXPECT_EQ(merged[1].root, "b");
  EXPECT_EQ(merged[1].kind, ExplainKind::Applied);
  EXPECT_EQ(merged[1].iteration, 14u);
  EXPECT_EQ(merged[1].rewrite_index, 8u);
}
