// The matcher against hand-built graphs: DAG captures, literals, commutative operands, n-ary
// subsets, alternation, multi-output nodes, normalization, the outside-use rule, near misses.
#include <gtest/gtest.h>

#include "engine/rewrite/graph_util.h"
#include "engine/rewrite/match.h"
#include "engine/rewrite/normalize.h"
#include "engine/rewrite/predicate.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

// y = Mul(Mul(x, Add(Erf(Div(x, 1.4142135)), 1.0)), 0.5)  ->  y = fusor.Gelu(x)
Rule gelu_rule() {
  Rule r = make_rule("gelu_erf", 10);
  Pattern& p = r.pattern;
  int x = p.add_var("x");
  int div = p.add_node({op("Div")}, {PInput::of(x), PInput::lit(p.add_literal(Literal::scalar(1.4142135)))});
  int erf = p.add_node({op("Erf")}, {PInput::of(p.out(div))});
  int add = p.add_node({op("Add")}, {PInput::of(p.out(erf)), PInput::lit(p.add_literal(Literal::scalar(1.0)))});
  int mul = p.add_node({op("Mul")}, {PInput::of(x), PInput::of(p.out(add))});
  int y = p.add_node({op("Mul")}, {PInput::of(p.out(mul)), PInput::lit(p.add_literal(Literal::scalar(0.5)))}, {"y"});
  p.root = y;
  int gelu = r.rewrite.add_node({OpType("fusor", "Gelu"), {}, {RInput::of(x)}, 1});
  r.rewrite.redefs.push_back({p.out(y), RInput::node_out(gelu)});
  return r;
}

// Builds gelu(x) with the operands of every commutative op swapped, and the constant `half`.
struct GeluGraph {
  GB b;
  ValueId x, y;
  GeluGraph(float half = 0.5f, bool second_x_differs = false) {
    x = b.input("x", {2, 3});
    ValueId x2 = second_x_differs ? b.input("x2", {2, 3}) : x;
    ValueId d = b.node("Div", {x, b.scalar("sqrt2", 1.4142135f)}, "div");
    ValueId e = b.node("Erf", {d}, "erf");
    ValueId a = b.node("Add", {b.scalar("one", 1.0f), e}, "add");   // constant first
    ValueId m = b.node("Mul", {a, x2}, "mul");                       // x second
    y = b.node("Mul", {b.scalar("half", half), m}, "y");             // constant first
    b.output(y);
  }
};

bool match_at(GB& b, const Rule& r, const std::string& root, Match& m, NearMiss* miss = nullptr) {
  CompiledRule cr = compile_rule(r, 0);
  NormCache norm(b.g);
  MatchEnv env{b.g, norm, b.opset};
  return match_rule(cr, env, b.find(root), m, miss);
}

}  // namespace

TEST(Match, GeluDagWithSharedCaptureAndSwappedOperands) {
  GeluGraph gg;
  Rule r = gelu_rule();
  Match m;
  ASSERT_TRUE(match_at(gg.b, r, "y", m));
  EXPECT_EQ(m.vars[0], gg.x);  // x
  // Every pattern node is bound to a distinct graph node.
  std::vector<NodeId> nodes = m.nodes;
  std::sort(nodes.begin(), nodes.end());
  EXPECT_EQ(std::unique(nodes.begin(), nodes.end()), nodes.end());
  EXPECT_EQ(gg.b.g.node(m.nodes[0]).name, "div");
}

TEST(Match, RepeatedCaptureMustBeTheSameValue) {
  GeluGraph gg(0.5f, /*second_x_differs=*/true);
  Rule r = gelu_rule();
  Match m;
  NearMiss miss;
  EXPECT_FALSE(match_at(gg.b, r, "y", m, &miss));
  EXPECT_NE(miss.reason.find("is 'x' but 'x' is already 'x2'"), std::string::npos) << miss.reason;
}

TEST(Match, NearMissNamesTheFailedLiteral) {
  GeluGraph gg(0.4f);
  Rule r = gelu_rule();
  Match m;
  NearMiss miss;
  EXPECT_FALSE(match_at(gg.b, r, "y", m, &miss));
  EXPECT_NE(miss.reason.find("node 'y' (Mul)"), std::string::npos) << miss.reason;
  EXPECT_NE(miss.reason.find("expected literal 0.5"), std::string::npos) << miss.reason;
}

TEST(Match, ExplainReportsNearMissesPerRoot) {
  GeluGraph gg(0.4f);
  RewriteOptions opts;
  opts.explain_rule = "gelu_erf";
  RewriteReport rep = run_rewrites(gg.b.g, {gelu_rule()}, opts, 17);
  bool found = false;
  for (const auto& e : rep.explain)
    if (e.root == "y") {
      found = true;
      EXPECT_FALSE(e.matched);
      EXPECT_NE(e.reason.find("expected literal 0.5"), std::string::npos) << e.reason;
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(gg.b.count("Erf"), 1);
}

TEST(Literal, ToleranceIntegerAndBroadcastRules) {
  Literal half = Literal::scalar(0.5);
  EXPECT_TRUE(literal_matches(half, Tensor::scalar<float>(0.5f + 1e-7f), 2));
  EXPECT_FALSE(literal_matches(half, Tensor::scalar<float>(0.5f + 1e-4f), 2));
  // Integer literal against a float constant, and against integer constants exactly.
  Literal two = Literal::scalar(2, /*integer=*/true);
  EXPECT_TRUE(literal_matches(two, Tensor::scalar<float>(2.0f), 0));
  EXPECT_TRUE(literal_matches(two, Tensor::scalar<int64_t>(2), 0));
  EXPECT_FALSE(literal_matches(two, Tensor::scalar<int64_t>(3), 0));
  // A float literal never matches a non-integral value in an integer constant.
  EXPECT_FALSE(literal_matches(Literal::scalar(2.5), Tensor::scalar<int64_t>(2), 0));
  // Shape: all-ones broadcasting into the output is fine; anything that changes it is not.
  EXPECT_TRUE(literal_matches(half, Tensor::from_vector<float>({1, 1}, {0.5f}), 2));
  EXPECT_FALSE(literal_matches(half, Tensor::from_vector<float>({1, 1, 1}, {0.5f}), 2));
  EXPECT_FALSE(literal_matches(half, Tensor::from_vector<float>({3}, {0.5f, 0.5f, 0.5f}), 2));
  // Large values: relative tolerance.
  EXPECT_TRUE(literal_matches(Literal::scalar(1e6), Tensor::scalar<float>(1e6f + 0.5f), 0));
  // Lists compare element-wise, 1-D of the same length.
  Literal l = Literal::list({-1, 1, 1, 1});
  EXPECT_TRUE(literal_matches(l, Tensor::from_vector<int64_t>({4}, {-1, 1, 1, 1}), 1));
  EXPECT_FALSE(literal_matches(l, Tensor::from_vector<int64_t>({4}, {-1, 1, 1, 2}), 1));
  EXPECT_FALSE(literal_matches(l, Tensor::from_vector<int64_t>({3}, {-1, 1, 1}), 1));
}

TEST(Match, ConstantNodeOutputsCountAsConstants) {
  GB b;
  ValueId x = b.input("x", {2});
  ValueId c = b.node("Constant", {}, "cst", {Attribute::make_tensor("value", std::make_shared<Tensor>(Tensor::scalar<float>(0.0f)))});
  ValueId a = b.node("Add", {x, c}, "add");
  b.output(b.node("Relu", {a}, "relu"));
  Rule r = make_rule("add_zero");
  int xv = r.pattern.add_var("x");
  r.pattern.root = r.pattern.add_node({op("Add")}, {PInput::of(xv), PInput::lit(r.pattern.add_literal(Literal::scalar(0, true)))}, {"y"});
  r.rewrite.redefs.push_back({r.pattern.out(r.pattern.root), RInput::of(xv)});
  Match m;
  EXPECT_TRUE(match_at(b, r, "add", m));
}

// y = Sum(Relu(a), b, rest...)
Rule sum_rule(bool tail) {
  Rule r = make_rule(tail ? "sum_tail" : "sum_pair");
  Pattern& p = r.pattern;
  int a = p.add_var("a"), bb = p.add_var("b");
  int relu = p.add_node({op("Relu")}, {PInput::of(a)});
  std::vector<PInput> in = {PInput::of(p.out(relu)), PInput::of(bb)};
  if (tail) in.push_back(PInput::tail(p.add_var("rest")));
  p.root = p.add_node({op("Sum")}, in, {"y"});
  r.rewrite.redefs.push_back({p.out(p.root), RInput::of(bb)});
  return r;
}

TEST(Match, NarySumMatchesAnySubsetInAnyOrder) {
  GB b;
  ValueId p = b.input("p", {2}), q = b.input("q", {2}), r = b.input("r", {2});
  ValueId relu = b.node("Relu", {r}, "relu");
  ValueId s3 = b.node("Sum", {p, q, relu}, "s3");
  ValueId s2 = b.node("Sum", {p, b.node("Relu", {r}, "relu2")}, "s2");
  b.output(s3);
  b.output(s2);
  Match m;
  Rule with_tail = sum_rule(true);
  ASSERT_TRUE(match_at(b, with_tail, "s3", m));
  EXPECT_EQ(m.vars[0], r);  // a
  EXPECT_EQ(m.vars[1], p);  // b: the first operand left
  int rest = 3;             // vars: a, b, relu out, rest, y
  ASSERT_EQ(with_tail.pattern.vars[rest].name, "rest");
  EXPECT_EQ(m.tails[rest], std::vector<ValueId>{q});
  Rule pair = sum_rule(false);
  EXPECT_TRUE(match_at(b, pair, "s2", m));
  EXPECT_EQ(m.vars[1], p);
  NearMiss miss;
  EXPECT_FALSE(match_at(b, pair, "s3", m, &miss));
  EXPECT_NE(miss.reason.find("has 3 inputs, pattern expects at most 2"), std::string::npos) << miss.reason;
}

TEST(Match, AlternationAndClipBoundsSeenAsAttributes) {
  GB b;
  b.opset = 13;
  ValueId x = b.input("x", {1, 2, 4, 4});
  ValueId w = b.init("w", Tensor(DataType::Float, {3, 2, 1, 1}));
  ValueId c = b.node("Conv", {x, w}, "conv");
  ValueId y = b.node("Clip", {c, b.scalar("lo", 0.f), b.scalar("hi", 6.f)}, "clip");
  b.output(y);
  // y = Relu | Sigmoid | Clip (c), c = Conv(x, w, b?)
  Rule r = make_rule("conv_activation");
  Pattern& p = r.pattern;
  int xv = p.add_var("x"), wv = p.add_var("w"), bv = p.add_var("b");
  int conv = p.add_node({op("Conv")}, {PInput::of(xv), PInput::of(wv), PInput::of(bv, true)}, {"c"});
  p.root = p.add_node({op("Relu"), op("Sigmoid"), op("Clip")}, {PInput::of(p.out(conv))}, {"y"});
  r.rewrite.redefs.push_back({p.out(p.root), RInput::of(xv)});
  Match m;
  ASSERT_TRUE(match_at(b, r, "clip", m));
  EXPECT_TRUE(m.is_absent(bv));
  NormCache norm(b.g);
  const NormalizedNode& nn = norm.get(b.find("clip"));
  EXPECT_EQ(nn.inputs.size(), 1u);
  ASSERT_NE(nn.attr("min"), nullptr);
  EXPECT_FLOAT_EQ(nn.attr("max")->f, 6.f);
  // Not in the alternation.
  GB b2;
  ValueId x2 = b2.input("x", {1, 2, 4, 4});
  ValueId c2 = b2.node("Conv", {x2, b2.init("w", Tensor(DataType::Float, {3, 2, 1, 1}))}, "conv");
  b2.output(b2.node("Tanh", {c2}, "tanh"));
  NearMiss miss;
  EXPECT_FALSE(match_at(b2, r, "tanh", m, &miss));
  EXPECT_EQ(miss.reason, "");  // the root op did not match: not a near miss
  // A near miss below the root names the alternation.
  Rule r2 = make_rule("relu_of_act");
  int cv = r2.pattern.add_var("c");
  int act = r2.pattern.add_node({op("Relu"), op("Sigmoid"), op("Clip")}, {PInput::of(cv)});
  r2.pattern.root = r2.pattern.add_node({op("Neg")}, {PInput::of(r2.pattern.out(act))}, {"y"});
  r2.rewrite.redefs.push_back({r2.pattern.out(r2.pattern.root), RInput::of(cv)});
  b2.g.set_output(0, b2.node("Neg", {b2.g.find_value("tanh")}, "neg"));
  EXPECT_FALSE(match_at(b2, r2, "neg", m, &miss));
  EXPECT_NE(miss.reason.find("node 'tanh' (Tanh): expected Relu | Sigmoid | Clip"), std::string::npos) << miss.reason;
}

TEST(Match, OutsideUseBlocksTheMatch) {
  GB b;
  ValueId x = b.input("x", {1, 2, 4, 4});
  ValueId c = b.node("Conv", {x, b.init("w", Tensor(DataType::Float, {3, 2, 1, 1}))}, "conv");
  ValueId y = b.node("Relu", {c}, "relu");
  ValueId z = b.node("Neg", {c}, "other");
  b.output(y);
  b.output(z);
  Rule r = make_rule("conv_relu");
  Pattern& p = r.pattern;
  int xv = p.add_var("x"), wv = p.add_var("w");
  int conv = p.add_node({op("Conv")}, {PInput::of(xv), PInput::of(wv)}, {"c"});
  p.root = p.add_node({op("Relu")}, {PInput::of(p.out(conv))}, {"y"});
  r.rewrite.redefs.push_back({p.out(p.root), RInput::of(xv)});
  Match m;
  NearMiss miss;
  EXPECT_FALSE(match_at(b, r, "relu", m, &miss));
  EXPECT_NE(miss.reason.find("has a consumer outside the match: node 'other' (Neg)"), std::string::npos) << miss.reason;
}

TEST(Match, MultiOutputUnnamedOutputsMustBeUnused) {
  // y = Dropout(x): the mask is not named, so it must have no consumers.
  Rule r = make_rule("dropout_removal");
  int xv = r.pattern.add_var("x");
  r.pattern.root = r.pattern.add_node({op("Dropout")}, {PInput::of(xv)}, {"y"});
  r.rewrite.redefs.push_back({r.pattern.out(r.pattern.root), RInput::of(xv)});
  GB b;
  ValueId x = b.input("x", {4});
  auto d = b.nodes("Dropout", {x}, "drop", 2);
  b.output(b.node("Relu", {d[0]}, "relu"));
  Match m;
  EXPECT_TRUE(match_at(b, r, "drop", m));
  b.output(b.node("Cast", {d[1]}, "use_mask", {Attribute::make_int("to", 1)}));
  NearMiss miss;
  EXPECT_FALSE(match_at(b, r, "drop", m, &miss));
  EXPECT_NE(miss.reason.find("consumer outside the match"), std::string::npos) << miss.reason;
}

TEST(Match, SplitConcatOutputsInPlace) {
  // a, b = Split<axis=0>(x); y = Concat<axis=0>(a, b)  ->  y = x
  Rule r = make_rule("split_concat");
  Pattern& p = r.pattern;
  int xv = p.add_var("x");
  int split = p.add_node({op("Split")}, {PInput::of(xv)}, {"a", "b"}, {{"axis", Attribute::make_int("axis", 0)}});
  p.root = p.add_node({op("Concat")}, {PInput::of(p.out(split, 0)), PInput::of(p.out(split, 1))}, {"y"},
                      {{"axis", Attribute::make_int("axis", 0)}});
  r.rewrite.redefs.push_back({p.out(p.root), RInput::of(xv)});
  for (bool swapped : {false, true}) {
    GB b;
    ValueId x = b.input("x", {4, 2});
    auto s = b.nodes("Split", {x}, "split", 2, {Attribute::make_int("axis", 0)});
    ValueId y = b.node("Concat", swapped ? std::vector<ValueId>{s[1], s[0]} : std::vector<ValueId>{s[0], s[1]}, "cat",
                       {Attribute::make_int("axis", -2)});  // normalized to 0 on rank 2
    b.output(b.node("Relu", {y}, "relu"));
    Match m;
    NearMiss miss;
    EXPECT_EQ(match_at(b, r, "cat", m, &miss), !swapped) << miss.reason;
    if (swapped) {
      EXPECT_NE(miss.reason.find("expected output 0"), std::string::npos) << miss.reason;
    }
  }
}

TEST(Normalize, NegativeAxesOmittedPermAndReduceAxesInput) {
  GB b;
  b.opset = 18;
  ValueId x = b.input("x", {2, 3, 4});
  ValueId t = b.node("Transpose", {x}, "t");
  ValueId r = b.node("ReduceMean", {x, b.ivec("axes", {-1})}, "rm");
  ValueId s = b.node("Softmax", {x}, "sm", {Attribute::make_int("axis", -1)});
  b.output(t); b.output(r); b.output(s);
  NormCache norm(b.g);
  EXPECT_EQ(norm.get(b.find("t")).attr("perm")->ints, (std::vector<int64_t>{2, 1, 0}));
  const NormalizedNode& rm = norm.get(b.find("rm"));
  EXPECT_EQ(rm.attr("axes")->ints, (std::vector<int64_t>{2}));
  EXPECT_EQ(rm.inputs.size(), 1u);
  EXPECT_EQ(norm.get(b.find("sm")).attr("axis")->i, 2);
}

TEST(Predicate, PermutationBuiltinsAndUnknowns) {
  GB b;
  ValueId x = b.input("x", {2, 3, 4});
  ValueId sym = b.g.add_value("s");
  b.g.value(sym).type.elem = DataType::Float;
  b.g.value(sym).type.has_shape = true;
  b.g.value(sym).type.dims = {Dim::symbol("N"), Dim::known(8)};
  b.g.add_input(sym);
  Pattern p;
  int xv = p.add_var("x"), sv = p.add_var("s");
  Match m;
  m.vars = {x, sym};
  m.bound = {1, 1};
  m.tails.resize(2);
  NormCache norm(b.g);
  MatchEnv env{b.g, norm, 17};
  auto list = [](std::vector<double> v) {
    std::vector<Expr> k;
    for (double d : v) k.push_back(Expr::num(d));
    return Expr::call(Expr::Op::List, k);
  };
  auto eval = [&](const Expr& e) { return eval_expr(e, p, m, env).repr(); };
  EXPECT_EQ(eval(Expr::call(Expr::Op::Compose, {list({1, 2, 0}), list({2, 0, 1})})), "[0, 1, 2]");
  EXPECT_EQ(eval(Expr::call(Expr::Op::Inverse, {list({1, 2, 0})})), "[2, 0, 1]");
  EXPECT_EQ(eval(Expr::call(Expr::Op::Permute, {Expr::of_var(Expr::Op::Shape, xv), list({2, 0, 1})})), "[4, 2, 3]");
  EXPECT_EQ(eval(Expr::call(Expr::Op::RemapAxes, {list({2}), list({2, 0, 1})})), "[0]");
  // shape(s)[0] is symbolic: comparisons on it are unknown, and unknown is false at the top,
  // also under negation.
  Expr dim0 = Expr::call(Expr::Op::Index, {Expr::of_var(Expr::Op::Shape, sv), Expr::num(0)});
  Expr eq = Expr::call(Expr::Op::Eq, {dim0, Expr::num(1)});
  EXPECT_FALSE(eval_predicate(eq, p, m, env));
  EXPECT_FALSE(eval_predicate(Expr::call(Expr::Op::Not, {eq}), p, m, env));
  Expr dim1 = Expr::call(Expr::Op::Index, {Expr::of_var(Expr::Op::Shape, sv), Expr::num(1)});
  EXPECT_TRUE(eval_predicate(Expr::call(Expr::Op::Eq, {Expr::call(Expr::Op::Mod, {dim1, Expr::num(8)}), Expr::num(0)}), p, m, env));
  // false && unknown is false; true || unknown is true.
  EXPECT_TRUE(eval_predicate(Expr::call(Expr::Op::Not, {Expr::call(Expr::Op::And, {Expr::boolean_(false), eq})}), p, m, env));
  EXPECT_TRUE(eval_predicate(Expr::call(Expr::Op::Or, {Expr::boolean_(true), eq}), p, m, env));
  EXPECT_TRUE(eval_predicate(Expr::call(Expr::Op::Eq, {Expr::of_var(Expr::Op::DType, xv), Expr::dtype_name(DataType::Float)}), p, m, env));
  EXPECT_TRUE(eval_predicate(Expr::call(Expr::Op::In, {Expr::op_name(op("Relu")), Expr::call(Expr::Op::List, {Expr::op_name(op("Clip")), Expr::op_name(op("Relu"))})}), p, m, env));
}
