#include "engine/exec/executor.h"

#include <gtest/gtest.h>

#include <thread>

#include "kernels/gemm/gemm.h"
#include "kernels/kernel.h"

namespace fusor {
namespace {

// Test kernels in their own domain, so these tests do not depend on the reference kernels.
class AddOne : public Kernel {  // y = x + 1, may run in place
 public:
  void compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = x.data<float>()[i] + 1;
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }
};
class Flatten : public Kernel {  // a view: [numel]
 public:
  void compute(KernelContext& ctx) override { ctx.output_alias(0, 0, {ctx.input(0)->numel()}); }
  int alias_of(int out) const override { return out == 0 ? 0 : -1; }
};
class AddSame : public Kernel {  // y = a + b elementwise by index; shape of a
 public:
  void compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.numel() != b.numel()) throw_bad_input(ctx.where() + ": sizes differ");
    Tensor& y = ctx.output(0, a.shape(), DataType::Float);
    for (int64_t i = 0; i < a.numel(); ++i) y.data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
  }
};
class Doubler : public Kernel {  // y = 2x through scratch memory
 public:
  void compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    float* tmp = static_cast<float*>(ctx.scratch(x.nbytes()));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(tmp) % 64, 0u);
    for (int64_t i = 0; i < x.numel(); ++i) tmp[i] = 2 * x.data<float>()[i];
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = tmp[i];
  }
};
class Thrower : public Kernel {
 public:
  void compute(KernelContext&) override { throw_bad_input("boom"); }
};

// AddOne with constant bytes (Kernel::weights), and AddOne recording the weights hint it ran with.
alignas(64) const float kWeights[64] = {};
class Weighted : public AddOne {
 public:
  Bytes weights() const override { return {kWeights, sizeof(kWeights)}; }
};
std::vector<const void*> g_hints_seen;
class HintRecorder : public AddOne {
 public:
  void compute(KernelContext& ctx) override {
    g_hints_seen.push_back(weights_hint().data);
    AddOne::compute(ctx);
  }
};

void register_test_kernels() {
  static bool done = [] {
    auto& r = KernelRegistry::global();
    r.add("test", "AddOne", "reference", 0, [](const KernelInfo&) { return std::make_unique<AddOne>(); });
    r.add("test", "Flatten", "reference", 0, [](const KernelInfo&) { return std::make_unique<Flatten>(); });
    r.add("test", "AddSame", "reference", 0, [](const KernelInfo&) { return std::make_unique<AddSame>(); });
    r.add("test", "Doubler", "reference", 0, [](const KernelInfo&) { return std::make_unique<Doubler>(); });
    r.add("test", "Thrower", "reference", 0, [](const KernelInfo&) { return std::make_unique<Thrower>(); });
    r.add("test", "Weighted", "reference", 0, [](const KernelInfo&) { return std::make_unique<Weighted>(); });
    r.add("test", "HintRecorder", "reference", 0, [](const KernelInfo&) { return std::make_unique<HintRecorder>(); });
    return true;
  }();
  (void)done;
}

using Outs = std::vector<ValueId>;  // add_node({v}) would pick the num_outputs overload

OpType op(const char* name) { return OpType("test", name); }

ValueId value(Graph& g, const std::string& name, std::vector<Dim> dims, DataType t = DataType::Float) {
  ValueType ty = ValueType::tensor(t);
  ty.has_shape = true;
  ty.dims = std::move(dims);
  return g.add_value(name, ty);
}
std::vector<Dim> dims(std::initializer_list<int64_t> d) {
  std::vector<Dim> out;
  for (int64_t v : d) out.push_back(Dim::known(v));
  return out;
}
Tensor floats(Shape s, float start) {
  Tensor t(DataType::Float, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}

// x -> a=x+1 -> b=a+1 (in place) -> v=flatten(b) (view) -> c=v+1 (in place over the view's
// buffer) -> y = c + x  (so y = 2x + 3)
std::unique_ptr<Graph> chain_graph(std::vector<Dim> xdims) {
  auto g = std::make_unique<Graph>();
  ValueId x = value(*g, "x", xdims);
  g->add_input(x);
  ValueId a = value(*g, "a", xdims), b = value(*g, "b", xdims);
  ValueType flat = ValueType::tensor(DataType::Float);
  ValueId v = g->add_value("v", flat), c = g->add_value("c", flat), y = g->add_value("y", flat);
  g->add_node(op("AddOne"), {x}, Outs{a}, {}, "n1");
  g->add_node(op("AddOne"), {a}, Outs{b}, {}, "n2");
  g->add_node(op("Flatten"), {b}, Outs{v}, {}, "n3");
  g->add_node(op("AddOne"), {v}, Outs{c}, {}, "n4");
  g->add_node(op("AddSame"), {c, x}, Outs{y}, {}, "n5");
  g->add_output(y);
  return g;
}

void expect_2x_plus_3(const Tensor& x, const Tensor& y) {
  ASSERT_EQ(y.numel(), x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], 2 * x.data<float>()[i] + 3) << i;
}

TEST(Executor, ChainWithInPlaceAndViewsComputesTheRightValues) {
  register_test_kernels();
  auto g = chain_graph(dims({2, 3}));
  Executor ex(*g, {});
  Tensor x = floats({2, 3}, 1);
  auto out = ex.run({x});
  ASSERT_EQ(out.size(), 1u);
  expect_2x_plus_3(x, out[0]);
  EXPECT_EQ(x.data<float>()[0], 1.0f) << "the graph input must not be written over";
  MemoryReport r = ex.memory_report();
  EXPECT_GE(r.inplace, 1);
  EXPECT_LT(r.arena_bytes, r.naive_bytes);
}

// Each node runs with the weights of the next weighted node within 3 steps as the prefetch hint
// (kernels/gemm/gemm.h), none past that or after the last, and the hint is cleared after the run.
TEST(Executor, NodesRunWithTheNextWeightsAsPrefetchHint) {
  register_test_kernels();
  Graph g;
  const auto d = dims({4});
  ValueId x = value(g, "x", d);
  g.add_input(x);
  const char* ops[] = {"HintRecorder", "HintRecorder", "AddOne", "Weighted", "HintRecorder",
                       "AddOne", "AddOne", "AddOne", "Weighted", "HintRecorder"};
  ValueId cur = x;
  for (int i = 0; i < 10; ++i) {
    const std::string id = std::to_string(i);
    ValueId next = value(g, std::string("v").append(id), d);
    g.add_node(op(ops[i]), {cur}, Outs{next}, {}, std::string("n").append(id));
    cur = next;
  }
  g.add_output(cur);
  Executor ex(g, {});
  g_hints_seen.clear();
  auto out = ex.run({floats({4}, 0)});
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], 10.0f);
  // n0: Weighted n3 is 3 steps ahead; n1: 2 ahead; n4: the next (n8) is 4 ahead; n9: none.
  EXPECT_EQ(g_hints_seen, (std::vector<const void*>{kWeights, kWeights, nullptr, nullptr}));
  EXPECT_EQ(weights_hint().data, nullptr);
}

TEST(Executor, SteadyStateAllocatesNothing) {
  register_test_kernels();
  auto g = chain_graph(dims({4, 8}));
  Executor ex(*g, {});
  Tensor x = floats({4, 8}, 0);
  RunStats st;
  { auto warm = ex.run({x}, &st); }
  EXPECT_GT(st.allocs, 0);  // the run context, its arena, the output buffer
  for (int i = 0; i < 3; ++i) {
    auto out = ex.run({x}, &st);
    EXPECT_EQ(st.allocs, 0) << "run " << i;
    EXPECT_EQ(st.fallbacks, 0);
    expect_2x_plus_3(x, out[0]);
  }
}

TEST(Executor, DynamicShapesReplanThenAllocateNothing) {
  register_test_kernels();
  auto g = chain_graph({Dim::symbol("N")});
  Executor ex(*g, {});
  RunStats st;
  auto run = [&](int64_t n) {
    Tensor x = floats({n}, 0.5f);
    auto out = ex.run({x}, &st);
    expect_2x_plus_3(x, out[0]);
  };
  run(16);
  EXPECT_GT(st.fallbacks, 0) << "nothing was planned for unknown sizes";
  size_t arena16 = ex.memory_report().arena_bytes;
  EXPECT_GT(arena16, 0u);
  run(16);
  EXPECT_EQ(st.allocs, 0);
  run(1000);
  EXPECT_GT(st.allocs, 0) << "larger tensors do not fit the plan";
  EXPECT_GT(ex.memory_report().arena_bytes, arena16);
  run(1000);
  EXPECT_EQ(st.allocs, 0);
  run(16);
  EXPECT_EQ(st.allocs, 0) << "smaller tensors fit the grown plan";
}

TEST(Executor, ScratchComesFromAPlannedRegion) {
  register_test_kernels();
  Graph g;
  ValueId x = value(g, "x", dims({64}));
  g.add_input(x);
  ValueId y = value(g, "y", dims({64})), z = value(g, "z", dims({64}));
  g.add_node(op("Doubler"), {x}, Outs{y}, {}, "d1");
  g.add_node(op("Doubler"), {y}, Outs{z}, {}, "d2");
  g.add_output(z);
  Executor ex(g, {});
  Tensor in = floats({64}, 1);
  RunStats st;
  { auto o = ex.run({in}, &st); }
  EXPECT_GT(st.fallbacks, 0);
  EXPECT_GE(ex.memory_report().scratch_bytes, 64u * 4);
  auto out = ex.run({in}, &st);
  EXPECT_EQ(st.allocs, 0);
  for (int i = 0; i < 64; ++i) EXPECT_FLOAT_EQ(out[0].data<float>()[i], 4 * in.data<float>()[i]);
}

TEST(Executor, ConcurrentRunsGiveIdenticalResults) {
  register_test_kernels();
  auto g = chain_graph({Dim::symbol("N")});
  ExecOptions o;
  o.threads = 2;
  Executor ex(*g, {}, o);
  std::vector<std::thread> threads;
  std::vector<int> errors(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        int64_t n = 8 + (i % 5) * 3 + t;
        Tensor x = floats({n}, static_cast<float>(t * 100 + i));
        auto out = ex.run({x});
        for (int64_t k = 0; k < n; ++k)
          if (out[0].data<float>()[k] != 2 * x.data<float>()[k] + 3) ++errors[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(errors[t], 0) << "thread " << t;
}

Error catch_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error thrown";
  return Error(ErrorKind::Internal, "");
}

TEST(Executor, InputErrorsNameTheInput) {
  register_test_kernels();
  auto g = chain_graph(dims({2, 3}));
  Executor ex(*g, {});
  Error e = catch_error([&] { ex.run({Tensor(DataType::Int64, {2, 3})}); });
  EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();

  e = catch_error([&] { ex.run({floats({3, 2}, 0)}); });
  EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();

  e = catch_error([&] { ex.run({floats({6}, 0)}); });
  EXPECT_NE(std::string(e.what()).find("rank"), std::string::npos) << e.what();

  e = catch_error([&] { ex.run(NamedTensors{}); });
  EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  EXPECT_NE(std::string(e.what()).find("missing input 'x'"), std::string::npos) << e.what();

  e = catch_error([&] { ex.run(NamedTensors{{"x", floats({2, 3}, 0)}, {"bogus", floats({1}, 0)}}); });
  EXPECT_NE(std::string(e.what()).find("'bogus'"), std::string::npos) << e.what();
}

TEST(Executor, AnOpWithoutKernelFailsAtPlanTimeNamingTheNode) {
  Graph g;
  ValueId x = value(g, "x", dims({1}));
  g.add_input(x);
  ValueId y = value(g, "y", dims({1}));
  g.add_node(op("NoSuchOp"), {x}, Outs{y}, {}, "mystery");
  g.add_output(y);
  Error e = catch_error([&] { Executor ex(g, {}); });
  EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  EXPECT_NE(std::string(e.what()).find("mystery"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("NoSuchOp"), std::string::npos) << e.what();
}

TEST(Executor, KernelErrorsAreWrappedWithTheNode) {
  register_test_kernels();
  Graph g;
  ValueId x = value(g, "x", dims({1}));
  g.add_input(x);
  ValueId a = value(g, "a", dims({1})), y = value(g, "y", dims({1}));
  g.add_node(op("AddOne"), {x}, Outs{a}, {}, "fine");
  g.add_node(op("Thrower"), {a}, Outs{y}, {}, "thrower");
  g.add_output(y);
  Executor ex(g, {});
  Error e = catch_error([&] { ex.run({floats({1}, 0)}); });
  EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  EXPECT_NE(std::string(e.what()).find("node 'thrower'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
  // The executor stays usable after a failed run.
  EXPECT_THROW(ex.run({floats({1}, 0)}), Error);
}

TEST(Executor, GraphOutputsAreOwnedAndOutputsOfInputsAreCopies) {
  register_test_kernels();
  Graph g;
  ValueId x = value(g, "x", dims({3}));
  g.add_input(x);
  ValueId v = g.add_value("v", ValueType::tensor(DataType::Float));
  g.add_node(op("Flatten"), {x}, Outs{v}, {}, "view");
  g.add_output(x);
  g.add_output(v);
  Executor ex(g, {});
  Tensor in = floats({3}, 7);
  auto out = ex.run({in});
  ASSERT_EQ(out.size(), 2u);
  for (const Tensor& o : out) {
    EXPECT_NE(o.raw(), in.raw());
    EXPECT_TRUE(o.bit_equal(in.reshaped(o.shape())));
  }
}

// If with branches that capture an outer value; Loop with a loop-carried value and a scan output.
TEST(Executor, IfAndLoopRunSubgraphsWithCaptures) {
  register_test_kernels();
  Graph g;
  ValueId cond = value(g, "cond", {}, DataType::Bool);
  ValueId x = value(g, "x", dims({3}));
  g.add_input(cond);
  g.add_input(x);
  ValueId a = value(g, "a", dims({3}));
  g.add_node(op("AddOne"), {x}, Outs{a}, {}, "pre");

  auto then_g = std::make_shared<Graph>(&g);
  then_g->name = "then";
  ValueId ta = then_g->add_capture("a", a);
  ValueId tout = value(*then_g, "t_out", dims({3}));
  then_g->add_node(op("AddOne"), {ta}, Outs{tout}, {}, "then_add");
  then_g->add_output(tout);
  auto else_g = std::make_shared<Graph>(&g);
  else_g->name = "else";
  ValueId ea = else_g->add_capture("a", a);
  else_g->add_output(ea);  // passes the outer value through

  Attribute ta_attr, ea_attr;
  ta_attr.name = "then_branch";
  ta_attr.kind = AttrKind::Graph;
  ta_attr.g = then_g;
  ea_attr.name = "else_branch";
  ea_attr.kind = AttrKind::Graph;
  ea_attr.g = else_g;
  ValueId y = value(g, "y", dims({3}));
  g.add_node(OpType::onnx("If"), {cond}, Outs{y}, {ta_attr, ea_attr}, "if1");

  // Loop 4 times: s = s + 1 (+ the captured a), scan out the new s each time.
  auto body = std::make_shared<Graph>(&g);
  body->name = "body";
  ValueId it = value(*body, "it", {}, DataType::Int64);
  ValueId cin = value(*body, "cin", {}, DataType::Bool);
  ValueId s_in = value(*body, "s_in", dims({3}));
  body->add_input(it);
  body->add_input(cin);
  body->add_input(s_in);
  ValueId s1 = value(*body, "s1", dims({3}));
  ValueId cap = body->add_capture("a", a);
  ValueId s_out = value(*body, "s_out", dims({3}));
  ValueId scan = body->add_value("scan", ValueType::tensor(DataType::Float));
  body->add_node(op("AddOne"), {s_in}, Outs{s1}, {}, "body_add");
  body->add_node(op("AddSame"), {s1, cap}, Outs{s_out}, {}, "body_add_a");
  body->add_node(op("Flatten"), {s_out}, Outs{scan}, {}, "body_view");
  body->add_output(cin);
  body->add_output(s_out);
  body->add_output(scan);
  Attribute body_attr;
  body_attr.name = "body";
  body_attr.kind = AttrKind::Graph;
  body_attr.g = body;
  ValueId m = g.add_initializer("M", Tensor::scalar<int64_t>(4));
  ValueId s_final = value(g, "s_final", dims({3}));
  ValueId scans = g.add_value("scans", ValueType::tensor(DataType::Float));
  g.add_node(OpType::onnx("Loop"), {m, kNoValue, y}, Outs{s_final, scans}, {body_attr}, "loop1");
  g.add_output(y);
  g.add_output(s_final);
  g.add_output(scans);
  g.verify();

  Executor ex(g, {{"", 17}});
  Tensor xv = floats({3}, 1);  // a = x + 1 = {2,3,4}
  for (bool c : {true, false}) {
    auto out = ex.run(NamedTensors{{"cond", Tensor::scalar<bool>(c)}, {"x", xv}});
    ASSERT_EQ(out.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      float av = xv.data<float>()[i] + 1;
      float yv = c ? av + 1 : av;
      EXPECT_FLOAT_EQ(out[0].data<float>()[i], yv);
      // each iteration: s = s + 1 + a
      EXPECT_FLOAT_EQ(out[1].data<float>()[i], yv + 4 * (1 + av));
      ASSERT_EQ(out[2].shape(), (Shape{4, 3}));
      for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(out[2].data<float>()[k * 3 + i], yv + (k + 1) * (1 + av));
    }
  }
  RunStats st;
  auto out = ex.run(NamedTensors{{"cond", Tensor::scalar<bool>(true)}, {"x", xv}}, &st);
  EXPECT_EQ(st.fallbacks, 0) << "subgraph plans are re-planned too";
}

}  // namespace
}  // namespace fusor
