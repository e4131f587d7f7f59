// Rules applied through run_rewrites: the brief's rule shapes on small graphs, checked against
// values computed here independently.
#include <gtest/gtest.h>

#include <cmath>

#include "core/util/error.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

// rule conv_bn_fold:
//   c = Conv(x, w, b?); y = BatchNormalization(c, scale, shift, mean, var)
//   where const(w, b, scale, shift, mean, var) && rank(w) == 4
//   k = Div(scale, Sqrt(Add(var, y.epsilon)))
//   y = Conv <...c> (x, Mul(w, Reshape(k, [-1, 1, 1, 1])), Add(Mul(Sub(b ?? 0.0, mean), k), shift))
Rule conv_bn_rule() {
  Rule r = make_rule("conv_bn_fold", 3);
  Pattern& p = r.pattern;
  int x = p.add_var("x"), w = p.add_var("w"), b = p.add_var("b"), scale = p.add_var("scale"),
      shift = p.add_var("shift"), mean = p.add_var("mean"), var = p.add_var("var");
  int conv = p.add_node({op("Conv")}, {PInput::of(x), PInput::of(w), PInput::of(b, true)}, {"c"});
  int bn = p.add_node({op("BatchNormalization")},
                      {PInput::of(p.out(conv)), PInput::of(scale), PInput::of(shift), PInput::of(mean), PInput::of(var)},
                      {"y"});
  p.root = bn;
  auto v = [](int i) { Expr e; e.op = Expr::Op::Var; e.var = i; return e; };
  p.where = Expr::call(Expr::Op::And,
                       {Expr::call(Expr::Op::IsConst, {v(w), v(b), v(scale), v(shift), v(mean), v(var)}),
                        Expr::call(Expr::Op::Eq, {Expr::of_var(Expr::Op::Rank, w), Expr::num(4)})});
  Rewrite& rw = r.rewrite;
  int eps = rw.add_expr(Expr::attr(p.out(bn), "epsilon"));
  int n_add = rw.add_node({op("Add"), {}, {RInput::of(var), RInput::of_expr(eps)}, 1});
  int n_sqrt = rw.add_node({op("Sqrt"), {}, {RInput::node_out(n_add)}, 1});
  int k = rw.add_node({op("Div"), {}, {RInput::of(scale), RInput::node_out(n_sqrt)}, 1});
  int n_reshape = rw.add_node({op("Reshape"), {}, {RInput::node_out(k), RInput::lit(rw.add_literal(Literal::list({-1, 1, 1, 1})))}, 1});
  int n_w = rw.add_node({op("Mul"), {}, {RInput::of(w), RInput::node_out(n_reshape)}, 1});
  int n_sub = rw.add_node({op("Sub"), {}, {RInput::or_literal(b, rw.add_literal(Literal::scalar(0.0))), RInput::of(mean)}, 1});
  int n_mul = rw.add_node({op("Mul"), {}, {RInput::node_out(n_sub), RInput::node_out(k)}, 1});
  int n_b = rw.add_node({op("Add"), {}, {RInput::node_out(n_mul), RInput::of(shift)}, 1});
  AttrTemplate copy;
  copy.kind = AttrTemplate::Kind::CopyAll;
  copy.var = p.out(conv);
  int out = rw.add_node({op("Conv"), {copy}, {RInput::of(x), RInput::node_out(n_w), RInput::node_out(n_b)}, 1});
  rw.redefs.push_back({p.out(bn), RInput::node_out(out)});
  return r;
}

}  // namespace

TEST(Rewrite, ConvBnFoldsIntoOneConvWithFoldedWeights) {
  GB b;
  ValueId x = b.input("x", {1, 2, 3, 3});
  std::vector<float> w(3 * 2 * 1 * 1);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + static_cast<float>(i);
  std::vector<float> scale = {1.f, 2.f, 0.5f}, shift = {0.1f, -0.2f, 0.3f}, mean = {0.f, 1.f, -1.f}, var = {1.f, 4.f, 0.25f};
  ValueId wv = b.init("w", Tensor::from_vector<float>({3, 2, 1, 1}, w));
  ValueId c = b.node("Conv", {x, wv}, "conv", {Attribute::make_ints("kernel_shape", {1, 1})});
  ValueId y = b.node("BatchNormalization", {c, b.vec("scale", scale), b.vec("shift", shift), b.vec("mean", mean), b.vec("var", var)},
                     "bn", {Attribute::make_float("epsilon", 1e-3f)});
  b.output(b.node("Relu", {y}, "relu"));
  ValueType y_type = b.g.value(y).type;
  RewriteOptions opts;
  opts.trace = true;
  RewriteReport rep = run_rewrites(b.g, {conv_bn_rule()}, opts, 17);
  b.g.verify();
  EXPECT_EQ(rep.rules_fired["conv_bn_fold"], 1);
  EXPECT_GE(rep.rules_fired["constant_folding"], 7);
  ASSERT_EQ(b.g.num_nodes(), 2u) << b.dump();  // Conv, Relu
  const Node& conv = b.producer_of("bn");       // the redefined value keeps its name
  EXPECT_EQ(conv.op, op("Conv"));
  EXPECT_EQ(conv.attr_ints("kernel_shape"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(b.g.value(b.g.find_value("bn")).type, y_type);
  ASSERT_EQ(conv.inputs.size(), 3u);
  const Tensor& fw = *b.g.value(conv.inputs[1]).constant;
  const Tensor& fb = *b.g.value(conv.inputs[2]).constant;
  ASSERT_EQ(fw.shape(), (Shape{3, 2, 1, 1}));
  for (int o = 0; o < 3; ++o) {
    double k = scale[o] / std::sqrt(var[o] + 1e-3);
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(fw.data<float>()[o * 2 + i], w[o * 2 + i] * k, 1e-5);
    EXPECT_NEAR(fb.data<float>()[o], (0.0 - mean[o]) * k + shift[o], 1e-5);
  }
  // No dead initializers are left behind.
  EXPECT_EQ(b.g.initializers().size(), 2u) << b.dump();
  ASSERT_FALSE(rep.trace.empty());
  bool traced = false;
  for (const auto& t : rep.trace)
    if (t.rule == "conv_bn_fold") {
      traced = true;
      EXPECT_EQ(t.location, "test.rules:3");
      EXPECT_EQ(t.str(), "conv_bn_fold (test.rules:3): conv, bn");
    }
  EXPECT_TRUE(traced);
}

TEST(Rewrite, ConvBnSkippedWhenWeightsAreNotConstant) {
  GB b;
  ValueId x = b.input("x", {1, 2, 3, 3});
  ValueId w = b.input("w", {3, 2, 1, 1});  // a graph input: not constant
  ValueId c = b.node("Conv", {x, w}, "conv");
  std::vector<float> ones = {1, 1, 1};
  ValueId y = b.node("BatchNormalization", {c, b.vec("s", ones), b.vec("t", ones), b.vec("m", ones), b.vec("v", ones)}, "bn");
  b.output(y);
  RewriteOptions opts;
  opts.explain_rule = "conv_bn_fold";
  RewriteReport rep = run_rewrites(b.g, {conv_bn_rule()}, opts, 17);
  EXPECT_EQ(b.count("BatchNormalization"), 1);
  ASSERT_EQ(rep.explain.size(), 1u);
  EXPECT_NE(rep.explain[0].reason.find("where clause is false"), std::string::npos) << rep.explain[0].reason;
}

namespace {

// m = ReduceMean<axes=[-1]>(x); d = Sub(x, m); v = ReduceMean<axes=[-1]>(Pow(d, 2.0))
// y = Add(Mul(Div(d, Sqrt(Add(v, eps))), gamma), beta)
// where const(eps, gamma, beta) && rank(gamma) == 1
// y = fusor.LayerNorm <axis = -1, epsilon = scalar(eps)> (x, gamma, beta)
Rule layer_norm_rule() {
  Rule r = make_rule("layer_norm", 20);
  Pattern& p = r.pattern;
  int x = p.add_var("x"), eps = p.add_var("eps"), gamma = p.add_var("gamma"), beta = p.add_var("beta");
  AttrConstraint axes{"axes", Attribute::make_ints("axes", {-1})};
  int m = p.add_node({op("ReduceMean")}, {PInput::of(x)}, {"m"}, {axes});
  int d = p.add_node({op("Sub")}, {PInput::of(x), PInput::of(p.out(m))}, {"d"});
  int pw = p.add_node({op("Pow")}, {PInput::of(p.out(d)), PInput::lit(p.add_literal(Literal::scalar(2.0)))});
  int v = p.add_node({op("ReduceMean")}, {PInput::of(p.out(pw))}, {"v"}, {axes});
  int a = p.add_node({op("Add")}, {PInput::of(p.out(v)), PInput::of(eps)});
  int s = p.add_node({op("Sqrt")}, {PInput::of(p.out(a))});
  int q = p.add_node({op("Div")}, {PInput::of(p.out(d)), PInput::of(p.out(s))});
  int mu = p.add_node({op("Mul")}, {PInput::of(p.out(q)), PInput::of(gamma)});
  p.root = p.add_node({op("Add")}, {PInput::of(p.out(mu)), PInput::of(beta)}, {"y"});
  auto var = [](int i) { Expr e; e.op = Expr::Op::Var; e.var = i; return e; };
  p.where = Expr::call(Expr::Op::And, {Expr::call(Expr::Op::IsConst, {var(eps), var(gamma), var(beta)}),
                                       Expr::call(Expr::Op::Eq, {Expr::of_var(Expr::Op::Rank, gamma), Expr::num(1)})});
  AttrTemplate axis;
  axis.name = "axis";
  axis.value = Attribute::make_int("axis", -1);
  AttrTemplate epsilon;
  epsilon.kind = AttrTemplate::Kind::FromExpr;
  epsilon.name = "epsilon";
  epsilon.expr = Expr::of_var(Expr::Op::Scalar, eps);
  int ln = r.rewrite.add_node({OpType("fusor", "LayerNorm"), {axis, epsilon},
                               {RInput::of(x), RInput::of(gamma), RInput::of(beta)}, 1});
  r.rewrite.redefs.push_back({p.out(p.root), RInput::node_out(ln)});
  return r;
}

}  // namespace

TEST(Rewrite, LayerNormMatchesNormalizedAxes) {
  GB b;
  ValueId x = b.input("x", {2, 5, 4});
  ValueId m = b.node("ReduceMean", {x}, "m", {Attribute::make_ints("axes", {2})});  // [-1] on rank 3
  ValueId d = b.node("Sub", {x, m}, "d");
  ValueId pw = b.node("Pow", {d, b.scalar("two", 2.f)}, "pow");
  ValueId v = b.node("ReduceMean", {pw}, "v", {Attribute::make_ints("axes", {-1})});
  ValueId a = b.node("Add", {b.scalar("eps", 1e-5f), v}, "add_eps");
  ValueId s = b.node("Sqrt", {a}, "sqrt");
  ValueId q = b.node("Div", {d, s}, "div");
  ValueId mu = b.node("Mul", {b.vec("gamma", {1, 2, 3, 4}), q}, "mul");
  ValueId y = b.node("Add", {mu, b.vec("beta", {0, 0, 0, 1})}, "y");
  b.output(y);
  RewriteReport rep = run_rewrites(b.g, {layer_norm_rule()}, {}, 17);
  b.g.verify();
  EXPECT_EQ(rep.rules_fired["layer_norm"], 1);
  ASSERT_EQ(b.g.num_nodes(), 1u) << b.dump();
  const Node& ln = b.producer_of("y");
  EXPECT_EQ(ln.op, OpType("fusor", "LayerNorm"));
  EXPECT_EQ(ln.attr_int("axis", 0), -1);
  ASSERT_NE(ln.attr("epsilon"), nullptr);
  EXPECT_EQ(ln.attr("epsilon")->kind, AttrKind::Float);
  EXPECT_FLOAT_EQ(ln.attr_float("epsilon", 0), 1e-5f);
  EXPECT_EQ(b.g.value(ln.inputs[0]).name, "x");
  EXPECT_EQ(b.g.value(b.g.find_value("y")).type.str(), "float[2,5,4]");
}

namespace {

// t = Transpose(x); y = Transpose(t); where compose(t.perm, y.perm) == iota(rank(x)); y = x
Rule transpose_pair_rule() {
  Rule r = make_rule("transpose_pair", 30);
  Pattern& p = r.pattern;
  int x = p.add_var("x");
  int t = p.add_node({op("Transpose")}, {PInput::of(x)}, {"t"});
  p.root = p.add_node({op("Transpose")}, {PInput::of(p.out(t))}, {"y"});
  p.where = Expr::call(Expr::Op::Eq, {Expr::call(Expr::Op::Compose, {Expr::attr(p.out(t), "perm"), Expr::attr(p.out(p.root), "perm")}),
                                      Expr::call(Expr::Op::Iota, {Expr::of_var(Expr::Op::Rank, x)})});
  r.rewrite.redefs.push_back({p.out(p.root), RInput::of(x)});
  return r;
}

}  // namespace

TEST(Rewrite, TransposePairCancelsOnlyWhenInverse) {
  struct Case {
    std::vector<int64_t> p1, p2;
    bool cancels;
  };
  for (const Case& c : {Case{{1, 0, 2}, {1, 0, 2}, true}, Case{{1, 2, 0}, {2, 0, 1}, true},
                        Case{{1, 2, 0}, {1, 2, 0}, false}, Case{{}, {}, true}}) {
    GB b;
    ValueId x = b.input("x", {2, 3, 4});
    auto attrs = [](const std::vector<int64_t>& p) {
      return p.empty() ? std::vector<Attribute>{} : std::vector<Attribute>{Attribute::make_ints("perm", p)};
    };
    ValueId t = b.node("Transpose", {b.node("Relu", {x}, "r")}, "t1", attrs(c.p1));
    ValueId y = b.node("Transpose", {t}, "t2", attrs(c.p2));
    b.output(b.node("Neg", {y}, "neg"));
    run_rewrites(b.g, {transpose_pair_rule()}, {}, 17);
    b.g.verify();
    EXPECT_EQ(b.count("Transpose"), c.cancels ? 0 : 2) << b.dump();
    if (c.cancels) {
      EXPECT_EQ(b.g.value(b.producer_of("neg").inputs[0]).name, "r");
    }
  }
}

namespace {

// y = Add(x, 0) -> y = x
Rule add_zero_rule() {
  Rule r = make_rule("add_zero", 40);
  int x = r.pattern.add_var("x");
  r.pattern.root = r.pattern.add_node({op("Add")}, {PInput::of(x), PInput::lit(r.pattern.add_literal(Literal::scalar(0, true)))}, {"y"});
  r.rewrite.redefs.push_back({r.pattern.out(r.pattern.root), RInput::of(x)});
  return r;
}

Rule identity_rule() {
  Rule r = make_rule("identity_removal", 50);
  int x = r.pattern.add_var("x");
  r.pattern.root = r.pattern.add_node({op("Identity")}, {PInput::of(x)}, {"y"});
  r.rewrite.redefs.push_back({r.pattern.out(r.pattern.root), RInput::of(x)});
  return r;
}

}  // namespace

TEST(Rewrite, CommutativeAddWithConstantOnEitherSide) {
  GB b;
  ValueId x = b.input("x", {2, 2});
  ValueId a = b.node("Relu", {x}, "relu");
  ValueId s1 = b.node("Add", {a, b.scalar("z1", 0.f)}, "add1");
  ValueId s2 = b.node("Add", {b.init("z2", Tensor::from_vector<float>({1, 1}, {0.f})), s1}, "add2");
  ValueId s3 = b.node("Add", {s2, b.scalar("one", 1.f)}, "add3");
  b.output(s3);
  RewriteOptions opts;
  opts.disabled = {"constant_folding"};
  RewriteReport rep = run_rewrites(b.g, {add_zero_rule()}, opts, 17);
  b.g.verify();
  EXPECT_EQ(rep.rules_fired["add_zero"], 2);
  ASSERT_EQ(b.count("Add"), 1) << b.dump();
  EXPECT_EQ(b.g.value(b.producer_of("add3").inputs[0]).name, "relu");
  EXPECT_EQ(b.g.find_value("z1"), kNoValue);  // unused initializers go with their nodes
}

TEST(Rewrite, ForwardedGraphOutputKeepsItsNameOrAnIdentity) {
  // Identity(x) where x is a graph input: the Identity must stay, and that is not a change.
  {
    GB b;
    ValueId x = b.input("x", {2});
    b.output(b.node("Identity", {x}, "y"));
    RewriteReport rep = run_rewrites(b.g, {identity_rule()}, {}, 17);
    EXPECT_EQ(b.count("Identity"), 1);
    EXPECT_EQ(rep.rules_fired.count("identity_removal"), 0u);
    EXPECT_EQ(rep.stop, StopReason::Saturated);
  }
  // Identity(relu): relu's output takes the graph output's name.
  {
    GB b;
    ValueId x = b.input("x", {2});
    b.output(b.node("Identity", {b.node("Relu", {x}, "r")}, "y"));
    RewriteReport rep = run_rewrites(b.g, {identity_rule()}, {}, 17);
    b.g.verify();
    EXPECT_EQ(b.count("Identity"), 0);
    EXPECT_EQ(rep.rules_fired["identity_removal"], 1);
    ASSERT_EQ(b.g.outputs().size(), 1u);
    EXPECT_EQ(b.g.value(b.g.outputs()[0]).name, "y");
    EXPECT_EQ(b.g.node(b.g.value(b.g.outputs()[0]).producer).op, op("Relu"));
  }
}

TEST(Rewrite, ConvActivationCopiesOpAndAttrs) {
  GB b;
  b.opset = 13;
  ValueId x = b.input("x", {1, 2, 4, 4});
  ValueId c1 = b.node("Conv", {x, b.init("w1", Tensor(DataType::Float, {3, 2, 1, 1}))}, "conv1");
  ValueId y1 = b.node("Clip", {c1, b.scalar("lo", 0.f), b.scalar("hi", 6.f)}, "clip");
  ValueId c2 = b.node("Conv", {x, b.init("w2", Tensor(DataType::Float, {3, 2, 1, 1})), b.vec("bias", {1, 2, 3})}, "conv2");
  ValueId y2 = b.node("LeakyRelu", {c2}, "leaky");
  b.output(y1);
  b.output(y2);
  Rule r = make_rule("conv_activation", 60);
  Pattern& p = r.pattern;
  int xv = p.add_var("x"), wv = p.add_var("w"), bv = p.add_var("b");
  int conv = p.add_node({op("Conv")}, {PInput::of(xv), PInput::of(wv), PInput::of(bv, true)}, {"c"});
  p.root = p.add_node({op("Relu"), op("LeakyRelu"), op("Clip")}, {PInput::of(p.out(conv))}, {"y"});
  int y = p.out(p.root);
  AttrTemplate copy, act, params;
  copy.kind = AttrTemplate::Kind::CopyAll; copy.var = p.out(conv);
  act.kind = AttrTemplate::Kind::OpName; act.name = "activation"; act.var = y;
  params.kind = AttrTemplate::Kind::AttrsOf; params.name = "activation_params"; params.var = y;
  int f = r.rewrite.add_node({OpType("fusor", "FusedConv"), {copy, act, params}, {RInput::of(xv), RInput::of(wv), RInput::of(bv)}, 1});
  r.rewrite.redefs.push_back({y, RInput::node_out(f)});
  RewriteReport rep = run_rewrites(b.g, {r}, {}, 13);
  b.g.verify();
  EXPECT_EQ(rep.rules_fired["conv_activation"], 2);
  const Node& f1 = b.producer_of("clip");
  EXPECT_EQ(f1.op, OpType("fusor", "FusedConv"));
  EXPECT_EQ(f1.attr_string("activation", ""), "Clip");
  EXPECT_EQ(f1.attr_floats("activation_params"), (std::vector<float>{0.f, 6.f}));
  EXPECT_EQ(f1.inputs.size(), 2u);  // the absent bias is passed on as absent (trailing: dropped)
  const Node& f2 = b.producer_of("leaky");
  EXPECT_EQ(f2.attr_string("activation", ""), "LeakyRelu");
  EXPECT_EQ(f2.attr_floats("activation_params"), (std::vector<float>{0.01f}));  // ONNX default alpha
  EXPECT_EQ(f2.inputs.size(), 3u);
  EXPECT_EQ(b.g.find_value("lo"), kNoValue);
}

TEST(Rewrite, ChangingAnOutputTypeIsRefused) {
  GB b;
  ValueId x = b.input("x", {2});
  b.output(b.node("Relu", {x}, "y"));
  Rule r = make_rule("bad_cast", 70);
  int xv = r.pattern.add_var("x");
  r.pattern.root = r.pattern.add_node({op("Relu")}, {PInput::of(xv)}, {"y"});
  AttrTemplate to;
  to.name = "to";
  to.value = Attribute::make_int("to", static_cast<int64_t>(DataType::Int64));
  int c = r.rewrite.add_node({op("Cast"), {to}, {RInput::of(xv)}, 1});
  r.rewrite.redefs.push_back({r.pattern.out(r.pattern.root), RInput::node_out(c)});
  RewriteOptions opts;
  opts.explain_rule = "bad_cast";
  RewriteReport rep = run_rewrites(b.g, {r}, opts, 17);
  b.g.verify();
  EXPECT_EQ(b.count("Relu"), 1);
  EXPECT_EQ(b.count("Cast"), 0);
  ASSERT_EQ(rep.explain.size(), 1u);
  EXPECT_TRUE(rep.explain[0].matched);
  EXPECT_FALSE(rep.explain[0].applied);
  EXPECT_NE(rep.explain[0].reason.find("element type from float to int64"), std::string::npos) << rep.explain[0].reason;
}

TEST(Rewrite, MalformedRuleIsBadInput) {
  Rule r = make_rule("broken", 80);
  r.pattern.add_var("x");
  try {
    GB b;
    run_rewrites(b.g, {r}, {}, 17);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("test.rules:80: rule 'broken'"), std::string::npos) << e.what();
  }
}
