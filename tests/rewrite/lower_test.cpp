// The lowering of checked dsl rules into engine Rules (engine/rewrite/lower.h): the brief's rule
// shapes lowered from text and checked structurally; then every shipped basic rule
// (rules/basic/*.rules) applied to a small graph, checked structurally and numerically (the
// graph run by the executor before and after the rewrite on the same random inputs).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>

#include "dsl/rules.h"
#include "engine/exec/executor.h"
#include "dsl/lower.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

std::vector<Rule> lower_text(const std::string& text, dsl::Diagnostics& diags) {
  dsl::RuleSet set = dsl::load_rules_from_text("t.rules", "fusor-rules 1\n" + text, {}, diags);
  if (diags.has_errors()) return {};
  return lower_rules(set.rules, diags);
}

std::vector<Rule> lower_ok(const std::string& text) {
  dsl::Diagnostics diags;
  auto rules = lower_text(text, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return rules;
}

const Rule* find(const std::vector<Rule>& rs, const std::string& name) {
  for (const Rule& r : rs)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace

TEST(Lower, ConvBnFoldFromTheBrief) {
  auto rules = lower_ok(R"(
rule conv_bn_fold
  level extended
  providers cpu
  match { c = Conv(x, w, b?)
          y = BatchNormalization(c, scale, shift, mean, var) }
  where { const(w, b, scale, shift, mean, var) && rank(w) == 4 }
  rewrite {
    k = Div(scale, Sqrt(Add(var, y.epsilon)))
    y = Conv <...c> (x, Mul(w, Reshape(k, [-1, 1, 1, 1])), Add(Mul(Sub(b ?? 0.0, mean), k), shift))
  }
)");
  ASSERT_EQ(rules.size(), 1u);
  const Rule& r = rules[0];
  EXPECT_EQ(r.level, OptLevel::Extended);
  EXPECT_EQ(r.providers, std::vector<std::string>{"cpu"});
  EXPECT_EQ(r.line, 3);
  EXPECT_EQ(r.file, "t.rules");
  EXPECT_EQ(r.effective_benefit(), 2);
  const Pattern& p = r.pattern;
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.root, 1);
  EXPECT_EQ(p.nodes[1].ops[0], op("BatchNormalization"));
  EXPECT_EQ(p.nodes[1].inputs[0].var, p.nodes[0].outputs[0]);  // c is shared
  EXPECT_TRUE(p.nodes[0].inputs[2].optional);
  ASSERT_TRUE(p.where.has_value());
  EXPECT_EQ(p.where->op, Expr::Op::And);
  EXPECT_EQ(p.where->kids[0].op, Expr::Op::IsConst);
  EXPECT_EQ(p.where->kids[0].kids.size(), 6u);
  const Rewrite& rw = r.rewrite;
  ASSERT_EQ(rw.redefs.size(), 1u);
  EXPECT_EQ(rw.redefs[0].var, p.nodes[1].outputs[0]);
  const RNode& conv = rw.nodes[rw.redefs[0].source.node];
  EXPECT_EQ(conv.op, op("Conv"));
  ASSERT_EQ(conv.attrs.size(), 1u);
  EXPECT_EQ(conv.attrs[0].kind, AttrTemplate::Kind::CopyAll);
  EXPECT_EQ(conv.attrs[0].var, p.nodes[0].outputs[0]);
  // Sub(b ?? 0.0, mean): a var with a literal fallback somewhere in the rewrite.
  bool fallback = false;
  for (const RNode& n : rw.nodes)
    for (const RInput& in : n.inputs) fallback |= in.kind == RInput::Kind::Var && in.literal >= 0;
  EXPECT_TRUE(fallback);
  // Add(var, y.epsilon): an expression input.
  bool eps = false;
  for (const RNode& n : rw.nodes)
    for (const RInput& in : n.inputs)
      eps |= in.kind == RInput::Kind::Expr && rw.exprs[in.expr].op == Expr::Op::AttrRead &&
             rw.exprs[in.expr].name == "epsilon";
  EXPECT_TRUE(eps);
}

TEST(Lower, AlternationAttrsOfAndOpNameAndLiftedClipLiterals) {
  auto rules = lower_ok(R"(
rule conv_clamp
  level extended
  match { c = Conv(x, w, b?)
          y = Relu | Clip (c) }
  where { const(w, b) }
  rewrite { y = fusor.FusedConv <...c, activation = y.op, activation_params = y.attrs> (x, w, b) }
rule relu6
  match { y = Clip(x, 0.0, 6.0) }
  rewrite { y = Relu(x) }
)");
  ASSERT_EQ(rules.size(), 2u);
  const Rule& cc = *find(rules, "conv_clamp");
  EXPECT_EQ(cc.pattern.nodes[1].ops.size(), 2u);
  const RNode& fused = cc.rewrite.nodes.back();
  EXPECT_EQ(fused.op, OpType("fusor", "FusedConv"));
  ASSERT_EQ(fused.attrs.size(), 3u);
  EXPECT_EQ(fused.attrs[1].kind, AttrTemplate::Kind::OpName);
  EXPECT_EQ(fused.attrs[2].kind, AttrTemplate::Kind::AttrsOf);
  const Rule& r6 = *find(rules, "relu6");
  const PatternNode& clip = r6.pattern.nodes[0];
  EXPECT_EQ(clip.inputs.size(), 1u);  // min/max are attributes in the normal form
  ASSERT_EQ(clip.attrs.size(), 2u);
  EXPECT_EQ(clip.attrs[0].name, "min");
  EXPECT_EQ(clip.attrs[1].name, "max");
  EXPECT_FLOAT_EQ(clip.attrs[1].value.f, 6.0f);
}

TEST(Lower, PatternWithTwoBodiesBecomesTwoRules) {
  auto rules = lower_ok(R"(
pattern act(x) { y = Relu(x) } | { y = Sigmoid(x) }
rule neg_act
  match { z = Neg(act(x)) }
  rewrite { z = Neg(x) }
)");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].pattern.nodes.size(), 2u);
  EXPECT_EQ(rules[0].pattern.nodes[0].ops[0], op("Relu"));
  EXPECT_EQ(rules[1].pattern.nodes[0].ops[0], op("Sigmoid"));
  EXPECT_EQ(rules[0].name, rules[1].name);
}

TEST(Lower, TransposePermExprAndIotaWhere) {
  auto rules = lower_ok(R"(
rule tp
  match { t = Transpose(x)
          y = Transpose(t) }
  where { compose(t.perm, y.perm) != iota(rank(x)) }
  rewrite { y = Transpose <perm = compose(t.perm, y.perm)> (x) }
)");
  ASSERT_EQ(rules.size(), 1u);
  const AttrTemplate& a = rules[0].rewrite.nodes[0].attrs[0];
  EXPECT_EQ(a.kind, AttrTemplate::Kind::FromExpr);
  ASSERT_TRUE(a.expr.has_value());
  EXPECT_EQ(a.expr->op, Expr::Op::Compose);
  EXPECT_EQ(rules[0].pattern.where->op, Expr::Op::Ne);
  EXPECT_EQ(rules[0].pattern.where->kids[1].op, Expr::Op::Iota);
}

// ---- the shipped basic rules on small graphs ----

namespace {

std::vector<Rule> basic_rules() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FUSOR_SOURCE_DIR) + "/rules/basic"))
    if (e.path().extension() == ".rules") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules(files, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  auto rules = lower_rules(set.select(OptLevel::Basic), diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return rules;
}

Tensor random_tensor(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  Tensor t(DataType::Float, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

std::vector<Tensor> execute(const Graph& g, const NamedTensors& in) {
  Executor ex(g, {{"", 17}});
  return ex.run(in);
}

// Builds the graph twice (the builder is deterministic), rewrites one copy with the basic rules
// and checks that its outputs equal the original's on random inputs. Returns the rewritten one.
struct Checked {
  GB b;
  RewriteReport rep;
};
std::unique_ptr<Checked> check_rule(const std::function<void(GB&)>& build, const std::vector<std::pair<std::string, Shape>>& inputs) {
  GB before;
  build(before);
  auto after = std::make_unique<Checked>();
  build(after->b);
  std::mt19937 rng(7);
  NamedTensors in;
  for (const auto& [n, s] : inputs) in.push_back({n, random_tensor(s, rng)});
  std::vector<Tensor> want = execute(before.g, in);
  RewriteOptions opts;
  opts.trace = true;
  after->rep = run_rewrites(after->b.g, basic_rules(), opts, 17);
  after->b.g.verify();
  std::vector<Tensor> got = execute(after->b.g, in);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape());
    EXPECT_EQ(got[i].numel(), want[i].numel());
    for (int64_t k = 0; k < got[i].numel() && k < want[i].numel(); ++k)
      if (got[i].as_double(k) != want[i].as_double(k)) {
        ADD_FAILURE() << "output " << i << " element " << k << ": " << got[i].as_double(k) << " vs " << want[i].as_double(k);
        break;
      }
  }
  return after;
}



}  // namespace

// A variadic capture passed on in a rewrite splices the values it matched in at its position:
// before, between or after other inputs, none of them included. Flattening a Concat of a Concat:
// Concat(Concat(a, b), c, d) is Concat(a, b, c, d), the result checked by running both graphs.
TEST(Lower, VariadicPassedOnInARewriteSplicesTheMatchedInputs) {
  auto rules = lower_ok(R"(
rule concat_flatten
  match { i = Concat(xs...)
          y = Concat(i, rest...) }
  where { i.axis == y.axis }
  rewrite { y = Concat <axis = y.axis> (xs..., rest...) }
)");
  ASSERT_EQ(rules.size(), 1u);
  const RNode& n = rules[0].rewrite.nodes.at(0);
  ASSERT_EQ(n.inputs.size(), 2u);
  EXPECT_EQ(n.inputs[0].kind, RInput::Kind::Tail);
  EXPECT_EQ(n.inputs[1].kind, RInput::Kind::Tail);
  // Names appended piecewise: GCC 12 warns falsely (-Wrestrict) on "a" + std::string.
  auto name = [](const char* p, int k) {
    std::string n = p;
    n += std::to_string(k);
    return n;
  };
  auto build = [&](GB& b, int inner, int outer) {
    std::vector<ValueId> in, out;
    for (int k = 0; k < inner; ++k) in.push_back(b.input(name("a", k), {1, k + 1, 2}));
    ValueId i = b.node("Concat", in, "inner", {Attribute::make_int("axis", 1)});
    out.push_back(i);
    for (int k = 0; k < outer; ++k) out.push_back(b.input(name("c", k), {1, 2, 2}));
    b.output(b.node("Concat", out, "outer", {Attribute::make_int("axis", 1)}));
  };
  for (auto [inner, outer] : {std::pair{2, 2}, std::pair{3, 0}, std::pair{1, 3}}) {
    GB before, after;
    build(before, inner, outer);
    build(after, inner, outer);
    RewriteReport rep = run_rewrites(after.g, rules, {}, 17);
    after.g.verify();
    EXPECT_EQ(rep.rules_fired["concat_flatten"], 1);
    ASSERT_EQ(after.count("Concat"), 1) << after.dump();
    const Node& c = after.producer(after.g.outputs()[0]);
    ASSERT_EQ(c.inputs.size(), static_cast<size_t>(inner + outer)) << after.dump();
    for (int k = 0; k < inner; ++k) EXPECT_EQ(after.g.value(c.inputs[k]).name, name("a", k));
    for (int k = 0; k < outer; ++k) EXPECT_EQ(after.g.value(c.inputs[inner + k]).name, name("c", k));
    std::mt19937 rng(3);
    NamedTensors feeds;
    for (int k = 0; k < inner; ++k) feeds.push_back({name("a", k), random_tensor({1, k + 1, 2}, rng)});
    for (int k = 0; k < outer; ++k) feeds.push_back({name("c", k), random_tensor({1, 2, 2}, rng)});
    const std::vector<Tensor> want = execute(before.g, feeds), got = execute(after.g, feeds);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), want[0].shape());
    for (int64_t k = 0; k < want[0].numel(); ++k) ASSERT_EQ(got[0].as_double(k), want[0].as_double(k)) << k;
  }
}


TEST(BasicRules, AllLoadAndLower) {
  auto rules = basic_rules();
  EXPECT_GE(rules.size(), 16u);
  for (const Rule& r : rules) EXPECT_EQ(r.level, OptLevel::Basic) << r.name;
}

TEST(BasicRules, IdentityDropoutCastRemoved) {
  auto c = check_rule([](GB& b) {
    ValueId x = b.input("x", {2, 3});
    ValueId i = b.node("Identity", {x}, "id");
    ValueId d = b.node("Dropout", {i}, "drop");
    ValueId cst = b.node("Cast", {d}, "cast", {Attribute::make_int("to", static_cast<int64_t>(DataType::Float))});
    b.output(b.node("Relu", {cst}, "relu"));
  }, {{"x", {2, 3}}});
  EXPECT_EQ(c->b.g.num_nodes(), 1u) << c->b.dump();
  EXPECT_EQ(c->rep.rules_fired["identity_removal"], 1);
  EXPECT_EQ(c->rep.rules_fired["dropout_removal"], 1);
  EXPECT_EQ(c->rep.rules_fired["cast_noop_removal"], 1);
}

TEST(BasicRules, CastThatChangesTypeStays) {
  auto c = check_rule([](GB& b) {
    ValueId x = b.input("x", {2, 3});
    ValueId cst = b.node("Cast", {x}, "cast", {Attribute::make_int("to", static_cast<int64_t>(DataType::Double))});
    b.output(b.node("Cast", {cst}, "back", {Attribute::make_int("to", static_cast<int64_t>(DataType::Float))}));
  }, {{"x", {2, 3}}});
  EXPECT_EQ(c->b.g.num_nodes(), 2u) << c->b.dump();
}

TEST(BasicRules, ReshapeChainCollapses) {
  auto c = check_rule([](GB& b) {
    ValueId x = b.input("x", {2, 3, 4});
    ValueId r1 = b.node("Reshape", {x, b.ivec("s1", {6, 4})}, "r1");
    ValueId r2 = b.node("Reshape", {r1, b.ivec("s2", {4, 6})}, "r2");
    b.output(b.node("Relu", {r2}, "relu"));
  }, {{"x", {2, 3, 4}}});
  EXPECT_EQ(c->b.count("Reshape"), 1) << c->b.dump();
  EXPECT_EQ(c->b.g.num_nodes(), 2u) << c->b.dump();
}

TEST(BasicRules, SqueezeUnsqueezeChainBecomesOneReshapeOrNothing) {
  auto c = check_rule([](GB& b) {
    ValueId x = b.input("x", {1, 3, 4});
    ValueId s = b.node("Squeeze", {x, b.ivec("ax", {0})}, "sq");
    ValueId u = b.node("Unsqueeze", {s, b.ivec("ax2", {0})}, "unsq");
    b.output(b.node("Relu", {u}, "relu"));
  }, {{"x", {1, 3, 4}}});
  // Squeeze then Unsqueeze of the same axis: one Reshape to the input's shape, then removed.
  EXPECT_EQ(c->b.count("Squeeze") + c->b.count("Unsqueeze") + c->b.count("Reshape"), 0) << c->b.dump();
}

TEST(BasicRules, FlattenAfterReshapeBecomesOneReshape) {
  auto c = check_rule([](GB& b) {
    ValueId x = b.input("x", {2, 3, 4});
    ValueId r = b.node("Reshape", {x, b.ivec("s", {2, 12, 1})}, "r");
    ValueId f = b.node("Flatten", {r}, "flat", {Attribute::make_int("axis", 1)});
    b.output(b.node("Relu", {f}, "relu"));
  }, {{"x", {2, 3, 4}}});
  EXPECT_EQ(c->b.count("Flatten"), 0) << c->b.dump();
  EXPECT_EQ(c->b.count("Reshape"), 1) << c->b.dump();
}

TEST(BasicRules, TransposePairCancelsAndComposes) {
  auto cancel = check_rule([](GB& b) {
    ValueId x = b.input("x", {2, 3, 4});
    ValueId t = b.node("Transpose", {x}, "t1", {Attribute::make_ints("perm", {1, 2, 0})});
    ValueId y = b.node("Transpose", {t}, "t2", {Attribute::make_ints("perm", {2, 0, 1})});
    b.output(b.node("Relu", {y}, "relu"));
  }, {{"x", {2, 3, 4}}});
  EXPECT_EQ(cancel->b.count("Transpose"), 0) << cancel->b.dump();
  auto merge = check_rule([](GB& b) {
    ValueId x = b.input("x", {2, 3, 4});
    ValueId t = b.node("Transpose", {x}, "t1", {Attribute::make_ints("perm", {1, 2, 0})});
    ValueId y = b.node("Transpose", {t}, "t2", {Attribute::make_ints("perm", {1, 0, 2})});
    b.output(b.node("Relu", {y}, "relu"));
  }, {{"x", {2, 3, 4}}});
  EXPECT_EQ(merge->b.count("Transpose"), 1) << merge->b.dump();
}

TEST(BasicRules, ArithmeticNeutralElementsRemovedOnlyWithoutBroadcast) {
  auto c = check_rule([](GB& b) {
    ValueId x = b.input("x", {2, 3});
    ValueId a = b.node("Add", {b.scalar("zero", 0.f), x}, "add");  // commuted
    ValueId s = b.node("Sub", {a, b.scalar("zero2", 0.f)}, "sub");
    ValueId m = b.node("Mul", {s, b.scalar("one", 1.f)}, "mul");
    ValueId d = b.node("Div", {m, b.scalar("one2", 1.f)}, "div");
    b.output(b.node("Relu", {d}, "relu"));
  }, {{"x", {2, 3}}});
  EXPECT_EQ(c->b.g.num_nodes(), 1u) << c->b.dump();
  // Adding zeros of a larger shape broadcasts: not a no-op.
  auto keep = check_rule([](GB& b) {
    ValueId x = b.input("x", {3});
    ValueId z = b.init("zeros", Tensor::from_vector<float>({2, 3}, std::vector<float>(6, 0.f)));
    b.output(b.node("Add", {x, z}, "add"));
  }, {{"x", {3}}});
  EXPECT_EQ(keep->b.count("Add"), 1) << keep->b.dump();
  // Multiplying by 2 stays.
  auto two = check_rule([](GB& b) {
    ValueId x = b.input("x", {3});
    b.output(b.node("Mul", {x, b.scalar("two", 2.f)}, "mul"));
  }, {{"x", {3}}});
  EXPECT_EQ(two->b.count("Mul"), 1);
}

TEST(BasicRules, PadSliceExpandNoopsRemoved) {
  auto c = check_rule([](GB& b) {
    ValueId x = b.input("x", {2, 3});
    ValueId p = b.node("Pad", {x, b.ivec("pads", {0, 0, 0, 0})}, "pad");
    ValueId s = b.node("Slice", {p, b.ivec("starts", {0}), b.ivec("ends", {100}), b.ivec("axes", {1})}, "slice");
    ValueId e = b.node("Expand", {s, b.ivec("shape", {2, 3})}, "expand");
    b.output(b.node("Relu", {e}, "relu"));
  }, {{"x", {2, 3}}});
  EXPECT_EQ(c->b.g.num_nodes(), 1u) << c->b.dump();
  // A reversing slice keeps the shape but is not a no-op.
  auto rev = check_rule([](GB& b) {
    ValueId x = b.input("x", {4});
    b.output(b.node("Slice", {x, b.ivec("st", {-1}), b.ivec("en", {-100}), b.ivec("ax", {0}), b.ivec("steps", {-1})}, "slice"));
  }, {{"x", {4}}});
  EXPECT_EQ(rev->b.count("Slice"), 1) << rev->b.dump();
}
