// The layout level and providers (issue 7): a small ResNet-like CNN optimized with the layout
// rules (cpu + rules/layout) and for `xnnpack,cpu` computes what the unoptimized model computes
// (plain ONNX kernels), keeps one Transpose at its input and one at its output, and is
// partitioned as the provider definitions say; bad provider inputs are errors with the right kind.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/exec/executor.h"
#include "core/util/error.h"
#include "engine/rewrite/infer.h"
#include "engine/session/optimize.h"
#include "engine/session/partition.h"
#include "kernels/xnnpack/xnn_runtime.h"

using namespace fusor;

namespace {

const std::string kRoot = FUSOR_SOURCE_DIR;

Tensor random_tensor(const Shape& shape, std::mt19937& gen, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(DataType::Float, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

// Builds the model node by node, with constants seeded so two builds are equal.
struct ModelBuilder {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  std::mt19937 gen{7};
  int next = 0;
  ModelBuilder() { m->opsets = {{"", 17}}; }
  Graph& g() { return *m->graph; }
  ValueId input(const std::string& name, Shape s) {
    ValueId v = g().add_value(name, ValueType::tensor(DataType::Float, s));
    g().add_input(v);
    return v;
  }
  ValueId weight(Shape s, float lo = -0.5f, float hi = 0.5f) {
    std::string name = "w";  // appended piecewise: GCC 12's false -Wrestrict on "w" + std::string
    name += std::to_string(next++);
    return g().add_initializer(name, random_tensor(s, gen, lo, hi));
  }
  ValueId node(const char* op, std::vector<ValueId> in, std::vector<Attribute> attrs = {}, const std::string& domain = "") {
    std::string name = std::string(op) + std::to_string(next++);
    ValueId out = g().add_value(name);
    NodeId id = g().add_node(OpType(domain, op), std::move(in), {out}, std::move(attrs), name);
    infer_node_types(g(), id, 17);  // the partitioner's conditions read input types, as after optimize()
    return out;
  }
  ValueId conv(ValueId x, int64_t cin, int64_t cout, int64_t k, int64_t stride = 1, int64_t group = 1) {
    const int64_t p = k / 2;
    return node("Conv", {x, weight({cout, cin / group, k, k}), weight({cout}, -0.1f, 0.1f)},
                {Attribute::make_ints("pads", {p, p, p, p}), Attribute::make_ints("strides", {stride, stride}),
                 Attribute::make_int("group", group)});
  }
  ValueId bn(ValueId x, int64_t c) {
    return node("BatchNormalization", {x, weight({c}, 0.5f, 1.5f), weight({c}, -0.2f, 0.2f), weight({c}, -0.2f, 0.2f),
                                       weight({c}, 0.5f, 1.5f)});
  }
};

// Conv-BN-Relu stem, MaxPool, a residual block (2 Convs), a depthwise Conv + Clip (MobileNet), an
// AveragePool, GlobalAveragePool, Flatten, Gemm.
std::unique_ptr<Model> small_cnn() {
  ModelBuilder b;
  ValueId x = b.input("image", {1, 3, 20, 20});
  ValueId s = b.node("Relu", {b.bn(b.conv(x, 3, 8, 3, 2), 8)});
  s = b.node("MaxPool", {s}, {Attribute::make_ints("kernel_shape", {3, 3}), Attribute::make_ints("strides", {2, 2}),
                              Attribute::make_ints("pads", {1, 1, 1, 1})});
  ValueId r = b.node("Relu", {b.conv(s, 8, 8, 3)});
  r = b.node("Relu", {b.node("Add", {b.conv(r, 8, 8, 3), s})});
  ValueId d = b.node("Clip", {b.conv(r, 8, 8, 3, 1, 8), b.g().add_initializer("lo", Tensor::scalar<float>(0.f)),
                              b.g().add_initializer("hi", Tensor::scalar<float>(6.f))});
  d = b.node("AveragePool", {d}, {Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_ints("strides", {1, 1})});
  ValueId f = b.node("Flatten", {b.node("GlobalAveragePool", {d})});
  ValueId y = b.node("Gemm", {f, b.weight({10, 8}), b.weight({10})}, {Attribute::make_int("transB", 1)});
  b.g().add_output(y);
  return std::move(b.m);
}

int count_op(const Model& m, const char* op) {
  int n = 0;
  for (NodeId id = m.graph->first(); id != kNoNode; id = m.graph->next(id)) n += m.graph->node(id).op.name() == op;
  return n;
}

std::vector<Tensor> run(const Model& m, const Partition* part, const Shape& image = {1, 3, 20, 20}) {
  std::mt19937 gen(11);
  NamedTensors feeds;
  feeds.push_back({"image", random_tensor(image, gen, -1.f, 1.f)});
  ExecOptions opts;
  opts.threads = 2;
  if (part) opts.kernel_impl_for = [part](const Node& n) { return part->kernel_impl(n); };
  return Executor(m, opts).run(feeds);
}

double max_rel_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t o = 0; o < a.size() && o < b.size(); ++o) {
    EXPECT_EQ(a[o].shape(), b[o].shape());
    if (a[o].shape() != b[o].shape()) return INFINITY;
    for (int64_t i = 0; i < a[o].numel(); ++i)
      worst = std::max(worst, std::fabs(a[o].as_double(i) - b[o].as_double(i)) / std::max(1.0, std::fabs(a[o].as_double(i))));
  }
  return worst;
}

OptimizeOptions layout_options(std::vector<std::string> providers) {
  OptimizeOptions o;
  o.level = OptLevel::All;
  o.providers = std::move(providers);
  o.rules_root = kRoot;
  return o;
}

bool xnnpack_built() { return xnnpack::xnnpack_status().empty(); }

}  // namespace

TEST(Layout, CpuWithLayoutRulesKeepsOneTransposeAtEachEndAndComputesTheSame) {
  auto reference = small_cnn();
  const std::vector<Tensor> want = run(*reference, nullptr);
  auto model = small_cnn();
  OptimizeOptions o = layout_options({"cpu"});
  for (const char* f : {"nhwc_conv_pool", "transpose_push", "transpose_axes"})
    o.rule_files.push_back(kRoot + "/rules/layout/" + f + ".rules");
  // In place of cpu's own blocked layout (rules/nchwc): its conv rules off, nothing else fires.
  o.disabled = {"conv_to_nchwc", "conv_plain_input_to_nchwc", "fused_conv_to_nchwc", "fused_conv_plain_input_to_nchwc",
                "fused_conv_residual_to_nchwc", "fused_conv_residual_plain_input_to_nchwc"};
  OptimizeReport rep = optimize(*model, o);
  EXPECT_EQ(count_op(*model, "Conv"), 0);
  EXPECT_EQ(count_op(*model, "NhwcConv"), 4);
  EXPECT_EQ(count_op(*model, "NhwcMaxPool"), 1);
  EXPECT_EQ(count_op(*model, "NhwcAveragePool"), 1);
  // The global pool runs channels-last too and Flatten of its N x 1 x 1 x C result reads the
  // same bytes in either layout (rules/layout/quantized_nhwc.rules), so no Transpose is left
  // before Flatten.
  EXPECT_EQ(count_op(*model, "NhwcGlobalAveragePool"), 1);
  EXPECT_EQ(count_op(*model, "Transpose"), 1) << "one after the input";
  EXPECT_GT(rep.rules_fired["conv_to_nhwc"] + rep.rules_fired["fused_conv_to_nhwc"] +
                rep.rules_fired["fused_conv_residual_to_nhwc"], 0);
  EXPECT_LT(max_rel_diff(want, run(*model, nullptr)), 1e-4);
}

// cpu as shipped runs its convolutions and pools in the blocked layout NCHWc (rules/nchwc): the
// RGB stem reads the NCHW input as it is, the only reorder is the one back to NCHW before Flatten.
TEST(Layout, CpuRunsConvsAndPoolsBlockedWithOneReorderAtTheEnd) {
  auto reference = small_cnn();
  const std::vector<Tensor> want = run(*reference, nullptr);
  auto model = small_cnn();
  OptimizeReport rep = optimize(*model, layout_options({"cpu"}));
  EXPECT_EQ(count_op(*model, "Conv") + count_op(*model, "FusedConv"), 0);
  EXPECT_EQ(count_op(*model, "NchwcConv"), 4);
  EXPECT_EQ(count_op(*model, "NchwcMaxPool"), 1);
  EXPECT_EQ(count_op(*model, "NchwcAveragePool"), 1);
  EXPECT_EQ(count_op(*model, "NchwcGlobalAveragePool"), 1);
  EXPECT_EQ(count_op(*model, "ReorderToNchwc"), 0);
  EXPECT_EQ(count_op(*model, "ReorderFromNchwc"), 1) << "before Flatten";
  EXPECT_GT(rep.rules_fired["nchwc_reorder_pair"], 0);
  EXPECT_LT(max_rel_diff(want, run(*model, nullptr)), 1e-4);
}

// DenseNet's pre-activation block: Concat -> BatchNormalization -> Relu -> Conv. The BN follows no
// conv (nothing folds it): it runs blocked as fusor.NchwcAffine with the Relu fused
// (rules/nchwc/nchwc_push.rules), so the data never leaves the blocked layout until Flatten.
std::unique_ptr<Model> dense_block_cnn() {
  ModelBuilder b;
  ValueId x = b.input("image", {1, 3, 20, 20});
  ValueId f0 = b.node("Relu", {b.bn(b.conv(x, 3, 32, 3, 2), 32)});
  ValueId h = b.node("Relu", {b.bn(b.conv(b.node("Relu", {b.bn(f0, 32)}), 32, 48, 1), 48)});
  ValueId f1 = b.conv(h, 48, 16, 3);
  ValueId cat = b.node("Concat", {f0, f1}, {Attribute::make_int("axis", 1)});
  ValueId t = b.conv(b.node("Relu", {b.bn(cat, 48)}), 48, 20, 1);  // 20: a partial last block
  ValueId a = b.node("Relu", {b.bn(t, 20)});                         // after a conv: folded
  ValueId y = b.node("Gemm", {b.node("Flatten", {b.node("GlobalAveragePool", {b.bn(a, 20)})}), b.weight({10, 20}),
                              b.weight({10})},
                     {Attribute::make_int("transB", 1)});
  b.g().add_output(y);
  return std::move(b.m);
}

TEST(Layout, CpuRunsStandaloneBatchNormBlocked) {
  auto reference = dense_block_cnn();
  const std::vector<Tensor> want = run(*reference, nullptr);
  auto model = dense_block_cnn();
  OptimizeReport rep = optimize(*model, layout_options({"cpu"}));
  EXPECT_EQ(count_op(*model, "BatchNormalization"), 0);
  EXPECT_EQ(count_op(*model, "NchwcAffine"), 3) << "f0's and cat's, and the one after the last Relu";
  EXPECT_EQ(count_op(*model, "Relu"), 0);
  EXPECT_EQ(count_op(*model, "ReorderToNchwc"), 0);
  EXPECT_EQ(count_op(*model, "ReorderFromNchwc"), 1) << "before Flatten";
  EXPECT_EQ(rep.rules_fired["nchwc_through_batchnorm"], 3);
  EXPECT_EQ(rep.rules_fired["nchwc_affine_activation"], 2);
  EXPECT_LT(max_rel_diff(want, run(*model, nullptr)), 1e-4);
}

// A whole dense block: layer k reads the Concat of the stem's output and every earlier layer's (2 to
// 6 inputs, more than the fixed-arity Concat rules take). Each Concat runs blocked, once: the
// variadic rules of nchwc_push.rules build layer k's from layer k-1's (merged by CSE), so none is
// computed twice and no reorder is left but the one before Flatten.
std::unique_ptr<Model> dense_block5_cnn() {
  ModelBuilder b;
  ValueId x = b.input("image", {1, 3, 20, 20});
  std::vector<ValueId> feats{b.node("Relu", {b.bn(b.conv(x, 3, 32, 3, 2), 32)})};
  int64_t c = 32;
  auto layer = [&](ValueId in, int64_t cin) {
    ValueId h = b.node("Relu", {b.bn(b.conv(b.node("Relu", {b.bn(in, cin)}), cin, 32, 1), 32)});
    return b.conv(h, 32, 16, 3);
  };
  feats.push_back(layer(feats[0], c));
  c += 16;
  for (int k = 2; k <= 5; ++k, c += 16) feats.push_back(layer(b.node("Concat", feats, {Attribute::make_int("axis", 1)}), c));
  ValueId cat = b.node("Concat", feats, {Attribute::make_int("axis", 1)});
  ValueId g = b.node("GlobalAveragePool", {b.node("Relu", {b.bn(cat, c)})});
  ValueId y = b.node("Gemm", {b.node("Flatten", {g}), b.weight({10, c}), b.weight({10})}, {Attribute::make_int("transB", 1)});
  b.g().add_output(y);
  return std::move(b.m);
}

TEST(Layout, CpuRunsDenseBlockConcatsBlockedOnce) {
  auto reference = dense_block5_cnn();
  const std::vector<Tensor> want = run(*reference, nullptr);
  auto model = dense_block5_cnn();
  OptimizeReport rep = optimize(*model, layout_options({"cpu"}));
  EXPECT_EQ(count_op(*model, "Concat"), 5) << "one per Concat of the model, none nested";
  EXPECT_EQ(count_op(*model, "BatchNormalization"), 0);
  EXPECT_EQ(count_op(*model, "ReorderToNchwc"), 0);
  EXPECT_EQ(count_op(*model, "ReorderFromNchwc"), 1) << "before Flatten";
  EXPECT_GT(rep.rules_fired["nchwc_concat_grow"], 0);
  EXPECT_LT(max_rel_diff(want, run(*model, nullptr)), 1e-4);
}

TEST(Layout, XnnpackCpuPartitionComputesTheSame) {
  if (!xnnpack_built()) GTEST_SKIP() << "built without XNNPACK: " << xnnpack::xnnpack_status();
  auto reference = small_cnn();
  const std::vector<Tensor> want = run(*reference, nullptr);
  auto model = small_cnn();
  OptimizeOptions o = layout_options({"xnnpack", "cpu"});
  OptimizeReport rep = optimize(*model, o);
  EXPECT_EQ(count_op(*model, "Transpose"), 2);
  Partition part = partition_model(*model, ProviderCatalog::load_or_throw(o.providers, kRoot));
  ASSERT_EQ(part.providers, (std::vector<std::string>{"xnnpack", "cpu"}));
  // 4 NhwcConv, the two pools, the global pool and the Gemm on XNNPACK; Add, Relu, Transposes,
  // Flatten on cpu.
  EXPECT_EQ(part.nodes_per_provider["xnnpack"], 8);
  EXPECT_EQ(part.nodes_per_provider["cpu"], static_cast<int64_t>(model->graph->num_nodes()) - 8);
  EXPECT_EQ(rep.provider_nodes, part.nodes_per_provider);
  EXPECT_LT(max_rel_diff(want, run(*model, &part)), 1e-4);
}

TEST(Layout, XnnpackRulesFuseOnlyClamps) {
  // Conv + Sigmoid: cpu's rules fuse it, xnnpack's do not (it fuses only a min/max clamp).
  auto build = [] {
    ModelBuilder b;
    ValueId x = b.input("image", {1, 3, 8, 8});
    ValueId y = b.node("Sigmoid", {b.conv(x, 3, 4, 3)});
    b.g().add_output(y);
    return std::move(b.m);
  };
  auto cpu = build();
  optimize(*cpu, layout_options({"cpu"}));
  EXPECT_EQ(count_op(*cpu, "NchwcConv"), 1) << "a FusedConv with its Sigmoid, blocked";
  EXPECT_EQ(count_op(*cpu, "Sigmoid"), 0);
  if (!xnnpack_built()) GTEST_SKIP() << xnnpack::xnnpack_status();
  auto xnn = build();
  optimize(*xnn, layout_options({"xnnpack", "cpu"}));
  EXPECT_EQ(count_op(*xnn, "Sigmoid"), 1);
  EXPECT_EQ(count_op(*xnn, "NhwcConv"), 1);
}

TEST(Layout, NodesXnnpackCannotRunFallBackToCpu) {
  if (!xnnpack_built()) GTEST_SKIP() << xnnpack::xnnpack_status();
  // An NhwcConv with a Sigmoid epilogue (XNNPACK clamps only) and one with Relu.
  ModelBuilder b;
  ValueId x = b.input("image", {1, 6, 6, 3});
  auto nhwc = [&](ValueId in, const char* act) {
    return b.node("NhwcConv", {in, b.weight({3, 3, 3, 3}), b.weight({3})},
                  {Attribute::make_string("activation", act), Attribute::make_ints("pads", {1, 1, 1, 1})}, "fusor");
  };
  ValueId y = nhwc(nhwc(x, "Sigmoid"), "Relu");
  b.g().add_output(y);
  b.m->opsets.push_back({"fusor", 1});
  Partition part = partition_model(*b.m, ProviderCatalog::load_or_throw({"xnnpack"}, kRoot));
  EXPECT_EQ(part.providers, (std::vector<std::string>{"xnnpack", "cpu"})) << "cpu is appended as the last fallback";
  EXPECT_EQ(part.nodes_per_provider["xnnpack"], 1);
  EXPECT_EQ(part.nodes_per_provider["cpu"], 1);
  EXPECT_LT(max_rel_diff(run(*b.m, nullptr, {1, 6, 6, 3}), run(*b.m, &part, {1, 6, 6, 3})), 1e-4);
}

TEST(Layout, NodeNoProviderCanRunIsBadInputNamingNodeOpAndProviders) {
  ModelBuilder b;
  ValueId x = b.input("image", {2});
  ValueId y = b.node("Mystery", {x}, {}, "com.example");
  b.g().add_output(y);
  b.m->opsets.push_back({"com.example", 1});
  try {
    partition_model(*b.m, ProviderCatalog::load_or_throw({"cpu"}, kRoot));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Mystery"), std::string::npos) << msg;
    EXPECT_NE(msg.find("com.example"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tried: cpu"), std::string::npos) << msg;
  }
}

TEST(Layout, UnknownProviderIsAUsageErrorListingTheKnownOnes) {
  try {
    ProviderCatalog::load_or_throw({"tpu", "cpu"}, kRoot);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'tpu'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cpu, xnnpack"), std::string::npos) << msg;
  }
}

// XNNPACK's kernels against fusor's cpu kernels, one node each, over the forms they take.
class XnnpackKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!xnnpack_built()) GTEST_SKIP() << xnnpack::xnnpack_status();
  }
  // Runs the one-node model on cpu and with the node on XNNPACK; returns the largest difference
  // and checks the node was given to XNNPACK.
  double compare(ModelBuilder& b, const Shape& image) {
    b.m->opsets.push_back({"fusor", 1});
    Partition part = partition_model(*b.m, ProviderCatalog::load_or_throw({"xnnpack", "cpu"}, kRoot));
    EXPECT_EQ(part.nodes_per_provider["xnnpack"], 1);
    return max_rel_diff(run(*b.m, nullptr, image), run(*b.m, &part, image));
  }
};

TEST_F(XnnpackKernels, Convolutions) {
  struct Case { int64_t cin, cout, k, stride, group; std::vector<int64_t> pads; const char* act; std::vector<float> params; };
  const std::vector<Case> cases = {
      {3, 8, 3, 1, 1, {1, 1, 1, 1}, "", {}},        {8, 16, 3, 2, 1, {1, 0, 1, 2}, "Relu", {}},
      {8, 8, 3, 1, 8, {1, 1, 1, 1}, "Clip", {0.f, 6.f}}, {8, 16, 3, 2, 8, {1, 1, 1, 1}, "Relu", {}},
      {8, 12, 1, 1, 2, {0, 0, 0, 0}, "", {}},       {4, 4, 5, 1, 4, {2, 2, 2, 2}, "Clip", {-0.1f, 0.1f}},
  };
  for (const Case& c : cases) {
    ModelBuilder b;
    ValueId x = b.input("image", {2, 9, 11, c.cin});
    ValueId y = b.node("NhwcConv", {x, b.weight({c.cout, c.cin / c.group, c.k, c.k}), b.weight({c.cout})},
                       {Attribute::make_ints("pads", c.pads), Attribute::make_ints("strides", {c.stride, c.stride}),
                        Attribute::make_int("group", c.group), Attribute::make_string("activation", c.act),
                        Attribute::make_floats("activation_params", c.params)},
                       "fusor");
    b.g().add_output(y);
    EXPECT_LT(compare(b, {2, 9, 11, c.cin}), 1e-4) << "cin " << c.cin << " group " << c.group << " k " << c.k;
  }
}

TEST_F(XnnpackKernels, Deconvolutions) {
  struct Case { int64_t cin, cout, k, stride, group; std::vector<int64_t> pads, out_pad; const char* act; };
  const std::vector<Case> cases = {
      {4, 3, 2, 2, 1, {0, 0, 0, 0}, {0, 0}, ""}, {6, 4, 3, 2, 2, {1, 1, 1, 1}, {1, 0}, "Relu"},
      {8, 8, 4, 2, 8, {1, 1, 1, 1}, {0, 0}, ""},
  };
  for (const Case& c : cases) {
    ModelBuilder b;
    ValueId x = b.input("image", {1, 5, 6, c.cin});
    ValueId y = b.node("NhwcConvTranspose", {x, b.weight({c.cin, c.cout / c.group, c.k, c.k}), b.weight({c.cout})},
                       {Attribute::make_ints("pads", c.pads), Attribute::make_ints("strides", {c.stride, c.stride}),
                        Attribute::make_ints("output_padding", c.out_pad), Attribute::make_int("group", c.group),
                        Attribute::make_string("activation", c.act)},
                       "fusor");
    b.g().add_output(y);
    EXPECT_LT(compare(b, {1, 5, 6, c.cin}), 1e-4) << "cin " << c.cin << " group " << c.group << " k " << c.k;
  }
}

TEST_F(XnnpackKernels, SameUpperPadding) {
  ModelBuilder b;
  ValueId x = b.input("image", {1, 7, 8, 4});
  ValueId y = b.node("NhwcConv", {x, b.weight({6, 4, 3, 3})},
                     {Attribute::make_string("auto_pad", "SAME_UPPER"), Attribute::make_ints("strides", {2, 2})}, "fusor");
  b.g().add_output(y);
  EXPECT_LT(compare(b, {1, 7, 8, 4}), 1e-4);
}

TEST_F(XnnpackKernels, Pools) {
  for (const char* op : {"NhwcMaxPool", "NhwcAveragePool"}) {
    ModelBuilder b;
    ValueId x = b.input("image", {2, 9, 10, 5});
    ValueId y = b.node(op, {x}, {Attribute::make_ints("kernel_shape", {3, 3}), Attribute::make_ints("strides", {2, 2}),
                                 Attribute::make_ints("pads", {1, 1, 1, 1})}, "fusor");
    b.g().add_output(y);
    EXPECT_LT(compare(b, {2, 9, 10, 5}), 1e-5) << op;
  }
  ModelBuilder b;
  ValueId x = b.input("image", {2, 4, 6, 5});
  b.g().add_output(b.node("NhwcGlobalAveragePool", {x}, {}, "fusor"));
  EXPECT_LT(compare(b, {2, 4, 6, 5}), 1e-5);
}

TEST_F(XnnpackKernels, FullyConnected) {
  for (int64_t trans_b : {0, 1}) {
    ModelBuilder b;
    ValueId x = b.input("image", {3, 7});
    Shape bs = trans_b ? Shape{5, 7} : Shape{7, 5};
    b.g().add_output(b.node("Gemm", {x, b.weight(bs), b.weight({5})}, {Attribute::make_int("transB", trans_b)}));
    EXPECT_LT(compare(b, {3, 7}), 1e-5) << "transB " << trans_b;
  }
}
