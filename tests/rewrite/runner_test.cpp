// The fixed-point loop: built-in passes, determinism, termination, worklist locality, subgraphs.
#include <gtest/gtest.h>

#include "core/util/error.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

// y = Unary(x) -> y = Other(x)
Rule swap_rule(const std::string& name, const char* from, const char* to) {
  Rule r = make_rule(name);
  int x = r.pattern.add_var("x");
  r.pattern.root = r.pattern.add_node({op(from)}, {PInput::of(x)}, {"y"});
  int n = r.rewrite.add_node({op(to), {}, {RInput::of(x)}, 1});
  r.rewrite.redefs.push_back({r.pattern.out(r.pattern.root), RInput::node_out(n)});
  return r;
}

// y = Relu(Relu(x)) -> y = t (the inner Relu)
Rule relu_relu_rule() {
  Rule r = make_rule("relu_relu");
  int x = r.pattern.add_var("x");
  int inner = r.pattern.add_node({op("Relu")}, {PInput::of(x)}, {"t"});
  r.pattern.root = r.pattern.add_node({op("Relu")}, {PInput::of(r.pattern.out(inner))}, {"y"});
  // Forward to x: both Relus go, and the new Relu(x) is the rule's result.
  int n = r.rewrite.add_node({op("Relu"), {}, {RInput::of(x)}, 1});
  r.rewrite.redefs.push_back({r.pattern.out(r.pattern.root), RInput::node_out(n)});
  return r;
}

void relu_chain(GB& b, int n) {
  ValueId v = b.input("x", {4});
  for (int i = 0; i < n; ++i) v = b.node(i % 2 ? "Neg" : "Relu", {v}, "n" + std::to_string(i));
  b.output(v);
}

}  // namespace

TEST(Passes, ConstantFoldingRespectsTheSizeBound) {
  auto build = [](GB& b) {
    ValueId x = b.input("x", {2});
    ValueId s = b.node("Add", {b.vec("a", {1, 2}), b.vec("c", {10, 20})}, "sum");
    b.output(b.node("Mul", {x, s}, "mul"));
    ValueId big = b.node("Expand", {b.scalar("one", 1.f), b.ivec("shape", {512, 1024})}, "expand");  // 2 MiB
    b.output(b.node("Relu", {big}, "relu_big"));
  };
  {
    GB b;
    build(b);
    RewriteReport rep = run_rewrites(b.g, {}, {}, 17);
    b.g.verify();
    EXPECT_EQ(b.count("Add"), 0);
    TensorPtr s = b.g.value(b.g.find_value("sum")).constant;
    ASSERT_TRUE(s);
    EXPECT_EQ(s->data<float>()[0], 11.f);
    EXPECT_EQ(s->data<float>()[1], 22.f);
    EXPECT_EQ(b.count("Expand"), 1);  // 2 MiB > the 1 MiB default
    EXPECT_EQ(rep.rules_fired["constant_folding"], 1);
  }
  {
    GB b;
    build(b);
    RewriteOptions opts;
    opts.fold_max_bytes = 4 << 20;
    run_rewrites(b.g, {}, opts, 17);
    b.g.verify();
    EXPECT_EQ(b.count("Expand"), 0);
    EXPECT_EQ(b.count("Relu"), 0);  // Relu of the folded constant folds too
    TensorPtr r = b.g.value(b.g.find_value("relu_big")).constant;
    ASSERT_TRUE(r);
    EXPECT_EQ(r->shape(), (Shape{512, 1024}));
    EXPECT_EQ(r->data<float>()[512 * 1024 - 1], 1.f);
  }
  {
    GB b;
    build(b);
    RewriteOptions opts;
    opts.disabled = {"constant_folding"};
    run_rewrites(b.g, {}, opts, 17);
    EXPECT_EQ(b.count("Add"), 1);
  }
}

// fusor.WinogradFilter may grow its constant input 4x when folded (op_traits fold_growth), past the
// 1 MiB budget; an ONNX op growing the same input as much (Tile) still may not.
TEST(Passes, ConstantFoldingLetsAWeightTransformGrowItsInput) {
  GB b;
  std::vector<float> wv(128 * 128 * 9);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(i % 7) - 3.f;
  ValueId w = b.init("w", Tensor::from_vector<float>({128, 128, 3, 3}, wv));  // 576 KiB; U 2.25 MiB
  ValueId u = b.g.add_value("u");
  NodeId wf = b.g.add_node(OpType(kFusorDomain, "WinogradFilter"), {w}, {u}, {Attribute::make_int("tile", 4)}, "u");
  infer_node_types(b.g, wf, b.opset);
  b.output(u);
  b.output(b.node("Tile", {w, b.ivec("reps", {2, 2, 1, 1})}, "tiled"));  // 2.25 MiB too
  run_rewrites(b.g, {}, {}, 17);
  b.g.verify();
  ASSERT_NE(b.g.find_value("u"), kNoValue);
  TensorPtr folded = b.g.value(b.g.find_value("u")).constant;
  ASSERT_TRUE(folded);
  EXPECT_EQ(folded->shape(), (Shape{6, 6, 128, 128}));
  // U[0][0] = G[0] g G[0]^T = g[0][0] / 4 (G's first row is (1/2, 0, 0)); element (c, k) at c * K + k.
  EXPECT_FLOAT_EQ(folded->data<float>()[3 * 128 + 2], wv[(2 * 128 + 3) * 9] / 4);
  EXPECT_EQ(b.count("Tile"), 1);
}

TEST(Passes, ShapeOfStaticValueFolds) {
  GB b;
  ValueId x = b.input("x", {2, 3, 4});
  ValueId s = b.node("Shape", {x}, "shape", {Attribute::make_int("start", 1)});
  b.output(b.node("Reshape", {x, b.node("Concat", {b.ivec("m1", {-1}), s}, "cat", {Attribute::make_int("axis", 0)})}, "r"));
  run_rewrites(b.g, {}, {}, 17);
  b.g.verify();
  EXPECT_EQ(b.count("Shape"), 0);
  EXPECT_EQ(b.count("Concat"), 0);
  const Node& r = b.producer_of("r");
  EXPECT_EQ(b.g.value(r.inputs[1]).constant->to_int64_vector(), (std::vector<int64_t>{-1, 3, 4}));
}

TEST(Passes, DeadCodeCseAndDedup) {
  GB b;
  ValueId x = b.input("x", {2});
  b.node("Sigmoid", {b.node("Tanh", {x}, "dead1")}, "dead2");  // unused chain
  ValueId a1 = b.node("Relu", {x}, "a1");
  ValueId a2 = b.node("Relu", {x}, "a2");
  ValueId l1 = b.node("LeakyRelu", {x}, "l1", {Attribute::make_float("alpha", 0.1f)});
  ValueId l2 = b.node("LeakyRelu", {x}, "l2", {Attribute::make_float("alpha", 0.2f)});
  ValueId m1 = b.node("Mul", {a1, b.vec("k1", {3, 4})}, "m1");
  ValueId m2 = b.node("Mul", {a2, b.vec("k2", {3, 4})}, "m2");  // equal to m1 once k2 is k1 and a2 is a1
  ValueId m3 = b.node("Mul", {a1, b.vec("k3", {3, 5})}, "m3");
  ValueId s = b.node("Sum", {m1, m2, m3, l1, l2}, "s");
  b.output(s);
  RewriteOptions opts;
  opts.trace = true;
  RewriteReport rep = run_rewrites(b.g, {}, opts, 17);
  b.g.verify();
  EXPECT_EQ(b.find("dead1"), kNoNode);
  EXPECT_EQ(b.find("dead2"), kNoNode);
  EXPECT_EQ(rep.rules_fired["dead_code"], 2);
  EXPECT_EQ(rep.rules_fired["initializer_dedup"], 1);
  EXPECT_EQ(b.g.find_value("k2"), kNoValue);
  EXPECT_NE(b.g.find_value("k3"), kNoValue);
  EXPECT_EQ(b.count("Relu"), 1);
  EXPECT_EQ(b.count("LeakyRelu"), 2);  // different alpha
  EXPECT_EQ(b.count("Mul"), 2);
  EXPECT_EQ(rep.rules_fired["cse"], 2);
  const Node& sum = b.producer_of("s");
  EXPECT_EQ(sum.inputs[0], sum.inputs[1]);
  for (const auto& t : rep.trace) EXPECT_EQ(t.location, "built-in");
}

TEST(Runner, DeterministicAcrossRuns) {
  auto run = [] {
    GB b;
    relu_chain(b, 40);
    ValueId x = b.g.find_value("x");
    ValueId a = b.node("Add", {b.node("Relu", {x}, "q1"), b.node("Relu", {x}, "q2")}, "add");
    b.output(b.node("Add", {a, b.node("Add", {b.scalar("c1", 1.f), b.scalar("c2", 2.f)}, "cadd")}, "out2"));
    RewriteOptions opts;
    opts.trace = true;
    RewriteReport rep = run_rewrites(b.g, {relu_relu_rule(), swap_rule("neg_to_abs", "Neg", "Abs")}, opts, 17);
    std::string t;
    for (const auto& r : rep.trace) t += r.str() + "\n";
    return b.dump() + "\n" + t;
  };
  std::string first = run();
  EXPECT_EQ(first, run());
  EXPECT_NE(first.find("neg_to_abs"), std::string::npos);
}

TEST(Runner, CyclingRulesAreReportedByName) {
  GB b;
  ValueId x = b.input("x", {2});
  b.output(b.node("Neg", {b.node("Relu", {x}, "r")}, "y"));
  std::vector<Rule> rules = {swap_rule("relu_to_abs", "Relu", "Abs"), swap_rule("abs_to_relu", "Abs", "Relu")};
  // The run stops and says why (it does not throw); the rules are named with where they are.
  rules[0].file = "mine.rules";
  rules[0].line = 3;
  rules[1].file = "mine.rules";
  rules[1].line = 9;
  RewriteReport cyc = run_rewrites(b.g, rules, {}, 17);
  EXPECT_EQ(cyc.stop, StopReason::Cycle);
  EXPECT_NE(cyc.stop_message.find("rules abs_to_relu (mine.rules:9), relu_to_abs (mine.rules:3) keep rewriting"),
            std::string::npos)
      << cyc.stop_message;
  b.g.verify();
  GB b2;
  ValueId x2 = b2.input("x", {2});
  b2.output(b2.node("Neg", {b2.node("Relu", {x2}, "r")}, "y"));
  RewriteOptions opts;
  opts.max_depth = 50;
  RewriteReport rep = run_rewrites(b2.g, rules, opts, 17);
  EXPECT_EQ(rep.stop, StopReason::Cycle);
  EXPECT_LE(rep.rewrites, 60u);
  b2.g.verify();
}

TEST(Runner, GlobalRewriteBoundStopsRunaways) {
  GB b;
  relu_chain(b, 10);
  RewriteOptions opts;
  opts.max_rewrites = 5;
  RewriteReport rep = run_rewrites(b.g, {swap_rule("relu_to_abs", "Relu", "Abs"), swap_rule("abs_to_relu", "Abs", "Relu")},
                                   opts, 17);
  EXPECT_EQ(rep.stop, StopReason::IterationLimit);
  EXPECT_NE(rep.stop_message.find("relu_to_abs"), std::string::npos);
}

TEST(Runner, WorklistWorkIsProportionalToTheGraph) {
  // Relu chains collapse one rewrite at a time; attempts must grow linearly with the graph, not
  // with graph x rewrites.
  auto attempts = [](int n) {
    GB b;
    ValueId v = b.input("x", {4});
    for (int i = 0; i < n; ++i) v = b.node("Relu", {v}, "n" + std::to_string(i));
    b.output(v);
    RewriteReport rep = run_rewrites(b.g, {relu_relu_rule()}, {}, 17);
    EXPECT_EQ(b.count("Relu"), 1);
    EXPECT_EQ(rep.rules_fired["relu_relu"], n - 1);
    return rep.match_attempts;
  };
  size_t small = attempts(500), big = attempts(5000);
  EXPECT_LE(small, 5u * 500);
  EXPECT_LE(big, 5u * 5000);
  EXPECT_LE(static_cast<double>(big) / small, 12.0);
}

TEST(Runner, DisabledRulesDoNotRun) {
  GB b;
  relu_chain(b, 4);
  RewriteOptions opts;
  opts.disabled = {"neg_to_abs"};
  RewriteReport rep = run_rewrites(b.g, {swap_rule("neg_to_abs", "Neg", "Abs")}, opts, 17);
  EXPECT_EQ(b.count("Neg"), 2);
  EXPECT_TRUE(rep.rules_fired.empty());
}

// An If node on `cond` with the two branches, whose float[2] output "out" is the graph's output.
static ValueId add_if(GB& b, ValueId cond, std::shared_ptr<Graph> then_g, std::shared_ptr<Graph> else_g) {
  Attribute tb;
  tb.name = "then_branch"; tb.kind = AttrKind::Graph; tb.g = std::move(then_g);
  Attribute eb;
  eb.name = "else_branch"; eb.kind = AttrKind::Graph; eb.g = std::move(else_g);
  ValueId out = b.g.add_value("out", ValueType::tensor(DataType::Float, {2}));
  b.g.add_node(op("If"), {cond}, std::vector<ValueId>{out}, {tb, eb}, "if");
  b.output(out);
  return out;
}

TEST(Runner, RewritingReachesIntoSubgraphs) {
  GB b;
  ValueId cond = b.input("cond", {}, DataType::Bool);
  ValueId x = b.input("x", {2});
  auto body = std::make_shared<Graph>(&b.g);
  body->name = "then";
  ValueId cx = body->add_capture("x", x);
  ValueId n1 = body->add_value("n1", ValueType::tensor(DataType::Float, {2}));
  ValueId n2 = body->add_value("n2", ValueType::tensor(DataType::Float, {2}));
  body->add_node(op("Neg"), {cx}, std::vector<ValueId>{n1}, {}, "neg");
  body->add_node(op("Relu"), {n1}, std::vector<ValueId>{n2}, {}, "relu");
  body->add_output(n2);
  auto els = std::make_shared<Graph>(&b.g);
  els->name = "else";
  ValueId ex = els->add_capture("x", x);
  ValueId e1 = els->add_value("e1", ValueType::tensor(DataType::Float, {2}));
  els->add_node(op("Identity"), {ex}, std::vector<ValueId>{e1}, {}, "id");
  els->add_output(e1);
  add_if(b, cond, body, els);
  RewriteReport rep = run_rewrites(b.g, {swap_rule("neg_to_abs", "Neg", "Abs")}, {}, 17);
  b.g.verify();
  EXPECT_EQ(rep.rules_fired["neg_to_abs"], 1);
  EXPECT_EQ(body->node(body->value(body->find_value("n1")).producer).op, op("Abs"));
  EXPECT_EQ(b.count("If"), 1);
}

// Outer-scope weights arrive in an If branch as captures: a Slice of a captured initializer is
// folded inside the branch (the result lives in the branch), the capture that no longer has a
// reader goes, and so does the outer initializer nothing else reads.
TEST(Runner, FoldsThroughCapturesOfOuterConstants) {
  GB b;
  ValueId cond = b.input("cond", {}, DataType::Bool);
  ValueId x = b.input("x", {2});
  ValueId w = b.init("w", Tensor::from_vector<float>({4}, {1.f, 2.f, 3.f, 4.f}));
  auto make_branch = [&](const char* name, int64_t start) {
    auto br = std::make_shared<Graph>(&b.g);
    br->name = name;
    ValueId cw = br->add_capture("w", w);
    ValueId cx = br->add_capture("x", x);
    ValueId st = br->add_initializer("st", Tensor::from_vector<int64_t>({1}, {start}));
    ValueId en = br->add_initializer("en", Tensor::from_vector<int64_t>({1}, {start + 2}));
    ValueId s = br->add_value("s", ValueType::tensor(DataType::Float, {2}));
    ValueId y = br->add_value("y", ValueType::tensor(DataType::Float, {2}));
    br->add_node(op("Slice"), {cw, st, en}, std::vector<ValueId>{s}, {}, "slice");
    br->add_node(op("Add"), {s, cx}, std::vector<ValueId>{y}, {}, "add");
    br->add_output(y);
    return br;
  };
  auto then_g = make_branch("then", 0), else_g = make_branch("else", 2);
  ValueId out = add_if(b, cond, then_g, else_g);
  run_rewrites(b.g, {}, {}, 17);
  b.g.verify();
  for (const auto& [br, first] : {std::pair{then_g, 1.f}, std::pair{else_g, 3.f}}) {
    EXPECT_EQ(br->num_nodes(), 1u) << br->name;  // the Add; the Slice was folded
    ValueId add_in = br->node(br->first()).inputs[0];
    ASSERT_NE(br->value(add_in).constant, nullptr) << br->name;
    EXPECT_EQ(br->value(add_in).constant->data<float>()[0], first) << br->name;
    EXPECT_EQ(br->captures().size(), 1u) << br->name;  // only x is still captured
  }
  EXPECT_EQ(b.g.find_value("w"), kNoValue);  // the outer initializer nobody reads went
  const Node& ifn = b.g.node(b.g.value(out).producer);
  EXPECT_EQ(ifn.implicit_inputs, std::vector<ValueId>{x});
}

namespace fusor {
namespace {

TEST(Runner, ObserversSeeEveryChange) {
  // A host's observer (as egg's hooks) sees each pass and each match with its outcome; the
  // report's counters are the sums of what it saw.
  struct Count : RewriteObserver {
    int passes = 0, applied = 0, begun = 0;
    void begin(const std::vector<CompiledRule>& rules) override { begun = static_cast<int>(rules.size()); }
    void pass_fired(const Graph&, const char*, const std::vector<std::string>&, int times, const RunProgress&) override {
      passes += times;
    }
    void matched(const Graph&, const RootInfo& root, const CompiledRule& c, const ApplyResult& res,
                 const std::vector<const CompiledRule*>&, const RunProgress& at) override {
      EXPECT_EQ(c.rule->name, "relu_relu");
      EXPECT_FALSE(root.name.empty());
      if (res.changed) {
        EXPECT_EQ(at.rewrites, static_cast<size_t>(applied + passes + 1));
      }
      applied += res.changed;
    }
  } count;
  GB b;
  ValueId v = b.input("x", {4});
  for (int i = 0; i < 6; ++i) v = b.node("Relu", {v}, "n" + std::to_string(i));
  b.output(b.node("Neg", {b.node("Relu", {b.init("c", Tensor::from_vector<float>({4}, {1, -2, 3, -4}))}, "folded")}, "neg"));
  b.output(v);
  RewriteOptions opts;
  opts.observers = {&count};
  RewriteReport rep = run_rewrites(b.g, {relu_relu_rule()}, opts, 17);
  EXPECT_EQ(count.begun, 1);
  EXPECT_EQ(count.applied, 5);
  EXPECT_EQ(count.applied, rep.rules_fired["relu_relu"]);
  EXPECT_GE(count.passes, 1);  // the constant Relu and Neg fold
  EXPECT_EQ(static_cast<size_t>(count.applied + count.passes), rep.rewrites);
  EXPECT_EQ(rep.stop, StopReason::Saturated);
}

}  // namespace
}  // namespace fusor

// Sequence values are never constants: a SequenceConstruct of constants and the SequenceAt of a
// constant position stay, and so does an Identity of a sequence, which the rule for Identity would
// otherwise match (rules leave nodes with sequence or optional values alone).
TEST(Passes, SequenceNodesAreNeitherFoldedNorRewritten) {
  GB b;
  ValueId s = b.g.add_value("s", ValueType::sequence(ValueType::tensor(DataType::Float)));
  b.g.add_node(op("SequenceConstruct"), {b.vec("a", {1, 2}), b.vec("c", {3, 4})}, std::vector<ValueId>{s}, {}, "construct");
  ValueId s2 = b.g.add_value("s2", ValueType::sequence(ValueType::tensor(DataType::Float)));
  b.g.add_node(op("Identity"), {s}, std::vector<ValueId>{s2}, {}, "id");
  ValueId at = b.g.add_value("at", ValueType::tensor(DataType::Float));
  b.g.add_node(op("SequenceAt"), {s2, b.init("pos", Tensor::scalar<int64_t>(1))}, std::vector<ValueId>{at}, {}, "at");
  b.output(b.node("Relu", {at}, "relu"));
  RewriteReport rep = run_rewrites(b.g, {swap_rule("identity_to_neg", "Identity", "Neg")}, {}, 17);
  b.g.verify();
  EXPECT_EQ(b.count("SequenceConstruct"), 1);
  EXPECT_EQ(b.count("SequenceAt"), 1);
  EXPECT_EQ(b.count("Identity"), 1);
  EXPECT_EQ(b.count("Neg"), 0);
  EXPECT_EQ(rep.rules_fired.count("identity_to_neg"), 0u);
}
