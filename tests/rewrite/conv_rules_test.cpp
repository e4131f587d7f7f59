// The shipped Conv and matrix-product rules (rules/basic/conv_folds.rules,
// rules/basic/gemm_folds.rules, rules/extended/conv_fusions.rules, rules/extended/matmul_fusions.rules) on small graphs: what
// they turn the graph into, and that the rewritten graph computes what the original computed
// (both run by the executor on the same random inputs; the original only through plain ONNX
// kernels). Also the engine additions these rules need: explicit zero pads in the normal form,
// symbolic dimensions that compare equal by name, and fusor ops' shapes inferred in any process.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "dsl/rules.h"
#include "engine/exec/executor.h"
#include "dsl/lower.h"
#include "engine/rewrite/normalize.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

namespace {

// The four rule files at `level` (basic: the folds only).
std::vector<Rule> conv_matmul_rules(OptLevel level) {
  const std::string root = std::string(FUSOR_SOURCE_DIR) + "/rules/";
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules(
      {root + "basic/conv_folds.rules", root + "basic/gemm_folds.rules", root + "extended/conv_fusions.rules",
       root + "extended/matmul_fusions.rules"},
      {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  std::vector<Rule> rules = lower_rules(set.select(level, "cpu"), diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return rules;
}

using Build = void (*)(GB&);

struct Rewritten {
  GB graph;
  RewriteReport report;
  double max_diff = 0;  // largest |after - before| over every output element
};

// Builds the graph twice (at `opset`), rewrites the second copy, runs both on the same inputs
// (uniform in [-2, 2), seeded) and records the largest difference.
std::unique_ptr<Rewritten> rewrite_and_compare(Build build, OptLevel level,
                                               const std::vector<std::pair<std::string, Shape>>& inputs,
                                               int64_t opset = 17) {
  GB reference;
  reference.opset = opset;
  build(reference);
  auto out = std::make_unique<Rewritten>();
  out->graph.opset = opset;
  build(out->graph);
  out->report = run_rewrites(out->graph.g, conv_matmul_rules(level), RewriteOptions{}, opset);
  out->graph.g.verify();
  std::mt19937 gen(2024);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  NamedTensors feeds;
  for (const auto& [name, shape] : inputs) {
    Tensor t(DataType::Float, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(gen);
    feeds.push_back({name, std::move(t)});
  }
  const std::vector<OpsetImport> opsets = {{"", opset}, {kFusorDomain, 1}};
  std::vector<Tensor> want = Executor(reference.g, opsets).run(feeds);
  std::vector<Tensor> got = Executor(out->graph.g, opsets).run(feeds);
  EXPECT_EQ(want.size(), got.size());
  for (size_t o = 0; o < want.size() && o < got.size(); ++o) {
    EXPECT_EQ(want[o].shape(), got[o].shape()) << "output " << o;
    if (want[o].shape() != got[o].shape()) continue;
    for (int64_t i = 0; i < want[o].numel(); ++i)
      out->max_diff = std::max(out->max_diff, std::fabs(want[o].as_double(i) - got[o].as_double(i)));
  }
  return out;
}

Tensor filled(const Shape& shape, float start, float step) {
  Tensor t(DataType::Float, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % 17);
  return t;
}

Attribute ints(const char* name, std::vector<int64_t> v) { return Attribute::make_ints(name, std::move(v)); }

const OpType kFusedConv(kFusorDomain, "FusedConv");
const OpType kFusedMatMul(kFusorDomain, "FusedMatMul");

}  // namespace

// PaddlePaddle's Conv, Mul by a [1] scale, Add of a [1] shift: one Conv at basic.
TEST(ConvFolds, PaddleAffineAfterConvFoldsIntoTheConv) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId x = b.input("x", {1, 4, 9, 9});
    ValueId c = b.node("Conv", {x, b.init("w", filled({4, 1, 3, 3}, -0.8f, 0.1f)), b.vec("b", {0.1f, -0.2f, 0.3f, 0.f})},
                       "conv", {Attribute::make_int("group", 4), ints("pads", {1, 1, 1, 1})});
    ValueId m = b.node("Mul", {b.vec("s", {0.94f}), c}, "mul");  // constant first: the matcher commutes
    b.output(b.node("Add", {m, b.vec("t", {0.5f})}, "add"));
  }, OptLevel::Basic, {{"x", {1, 4, 9, 9}}});
  EXPECT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  EXPECT_EQ(r->graph.count("Conv"), 1);
  EXPECT_LT(r->max_diff, 1e-5);
}

// BatchNormalization after a Conv without bias, and a per-channel Mul after that.
TEST(ConvFolds, BatchNormThenPerChannelScaleFold) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId x = b.input("x", {2, 3, 6, 6});
    ValueId c = b.node("Conv", {x, b.init("w", filled({5, 3, 3, 3}, -1.f, 0.13f))}, "conv");
    ValueId n = b.node("BatchNormalization",
                       {c, b.vec("sc", {1.f, 2.f, .5f, 1.5f, .7f}), b.vec("sh", {0.f, .1f, .2f, .3f, .4f}),
                        b.vec("mu", {.1f, -.1f, 0.f, .2f, .3f}), b.vec("var", {1.f, .5f, 2.f, .25f, 1.f})},
                       "bn", {Attribute::make_float("epsilon", 1e-3f)});
    b.output(b.node("Mul", {n, b.init("k", filled({1, 5, 1, 1}, 0.5f, 0.25f))}, "mul"));
  }, OptLevel::Basic, {{"x", {2, 3, 6, 6}}});
  EXPECT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  EXPECT_EQ(r->report.rules_fired["conv_bn_fold"], 1);
  EXPECT_EQ(r->report.rules_fired["conv_mul_scale"], 1);
  EXPECT_LT(r->max_diff, 1e-4);
}

// A BatchNormalization in training mode (opset 14+) normalizes with its batch's statistics, not the
// stored ones: no fold. At opset 13 the node has no training_mode (its inference form) and folds.
TEST(ConvFolds, TrainingModeBatchNormIsNotFoldedButOpset13Is) {
  for (int64_t opset : {13, 15}) {
    auto r = rewrite_and_compare([](GB& b) {
      ValueId x = b.input("x", {2, 3, 6, 6});
      ValueId c = b.node("Conv", {x, b.init("w", filled({5, 3, 3, 3}, -1.f, 0.13f))}, "conv");
      std::vector<Attribute> attrs = {Attribute::make_float("epsilon", 1e-3f)};
      if (b.opset >= 14) attrs.push_back(Attribute::make_int("training_mode", 1));
      b.output(b.node("BatchNormalization",
                      {c, b.vec("sc", {1.f, 2.f, .5f, 1.5f, .7f}), b.vec("sh", {0.f, .1f, .2f, .3f, .4f}),
                       b.vec("mu", {.1f, -.1f, 0.f, .2f, .3f}), b.vec("var", {1.f, .5f, 2.f, .25f, 1.f})},
                      "bn", attrs));
    }, OptLevel::Basic, {{"x", {2, 3, 6, 6}}}, opset);
    EXPECT_EQ(r->report.rules_fired["conv_bn_fold"], opset < 14 ? 1 : 0) << "opset " << opset;
    EXPECT_EQ(r->graph.count("BatchNormalization"), opset < 14 ? 0 : 1) << r->graph.dump();
    EXPECT_LT(r->max_diff, 1e-4);
  }
}

// A constant that varies along the width is not a per-channel bias: the Add stays.
TEST(ConvFolds, ConstantAlongAnotherAxisIsNotFolded) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId x = b.input("x", {1, 3, 4, 4});
    ValueId c = b.node("Conv", {x, b.init("w", filled({3, 3, 1, 1}, -1.f, 0.2f))}, "conv");
    b.output(b.node("Add", {c, b.init("a", filled({1, 1, 1, 4}, 0.f, 1.f))}, "add"));
  }, OptLevel::Basic, {{"x", {1, 3, 4, 4}}});
  EXPECT_EQ(r->graph.count("Add"), 1) << r->graph.dump();
  EXPECT_EQ(r->max_diff, 0.0);
}

// A scalar affine map in front of a Conv folds into it only when the Conv has no padding.
TEST(ConvFolds, InputAffineFoldsIntoAnUnpaddedConvOnly) {
  static int64_t conv_pad;  // read by the capture-less builder
  for (int64_t pad : {0, 1}) {
    conv_pad = pad;
    auto r = rewrite_and_compare([](GB& b) {
      ValueId x = b.input("x", {1, 3, 6, 6});
      ValueId m = b.node("Mul", {x, b.vec("s", {0.48f})}, "mul");
      ValueId a = b.node("Add", {b.vec("t", {-0.3f}), m}, "add");
      b.output(b.node("Conv", {a, b.init("w", filled({5, 3, 3, 3}, -0.5f, 0.07f)), b.vec("b", {.1f, .2f, .3f, .4f, .5f})},
                      "conv", {ints("pads", std::vector<int64_t>(4, conv_pad))}));
    }, OptLevel::Basic, {{"x", {1, 3, 6, 6}}});
    EXPECT_EQ(r->graph.g.num_nodes(), pad == 0 ? 1u : 3u) << "pads " << pad << ": " << r->graph.dump();
    EXPECT_LT(r->max_diff, 1e-5) << "pads " << pad;
  }
}

// The fold's filter sums are a MatMul on constants: folded as soon as the rewrite writes them, so
// the product rules (at extended) never see it as a product to fuse.
TEST(ConvFolds, ArithmeticOnWeightsIsFoldedBeforeOtherRulesSeeIt) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId m = b.node("Mul", {b.input("x", {1, 4, 5, 5}), b.vec("s", {1.5f})}, "mul");
    ValueId a = b.node("Add", {m, b.vec("t", {0.25f})}, "add");
    b.output(b.node("Conv", {a, b.init("w", filled({6, 4, 1, 1}, -0.5f, 0.07f)), b.vec("b", std::vector<float>(6, .1f))},
                    "conv"));
  }, OptLevel::Extended, {{"x", {1, 4, 5, 5}}});
  EXPECT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  EXPECT_EQ(r->report.rules_fired["affine_conv_input_fold"], 1);
  for (const auto& [rule, times] : r->report.rules_fired)
    EXPECT_TRUE(rule.find("matmul") == std::string::npos) << rule << " fired " << times << " times";
  EXPECT_LT(r->max_diff, 1e-5);
}

// A ResNet basic block's tail: Conv, residual Add, Relu, into one FusedConv with Z and Relu.
TEST(ConvFusions, ResidualAddAndReluFuseIntoOneConv) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId x = b.input("x", {1, 4, 8, 8});
    ValueId z = b.input("z", {1, 4, 8, 8});
    ValueId c = b.node("Conv", {x, b.init("w", filled({4, 4, 3, 3}, -0.5f, 0.07f)), b.vec("b", {.1f, .2f, .3f, .4f})},
                       "conv", {ints("pads", {1, 1, 1, 1})});
    ValueId a = b.node("Add", {z, c}, "add");
    b.output(b.node("Relu", {a}, "relu"));
  }, OptLevel::Extended, {{"x", {1, 4, 8, 8}}, {"z", {1, 4, 8, 8}}});
  ASSERT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  const Node& fused = r->graph.producer_of("relu");
  EXPECT_EQ(fused.op, kFusedConv);
  EXPECT_EQ(fused.attr_string("activation", ""), "Relu");
  EXPECT_EQ(fused.inputs.size(), 4u);
  EXPECT_LT(r->max_diff, 1e-5);
}

// With a batch dimension N unknown, z and the Conv's output share the symbol: still fused.
// With different symbols (they may differ at run time) it is not.
TEST(ConvFusions, ResidualWithSymbolicBatchComparesSymbolsByName) {
  auto nchw = [](const std::string& batch) {
    ValueType t = ValueType::tensor(DataType::Float);
    t.has_shape = true;
    t.dims = {Dim::symbol(batch), Dim::known(2), Dim::known(4), Dim::known(4)};
    return t;
  };
  for (const char* z_batch : {"N", "M"}) {
    GB b;
    ValueId x = b.g.add_value("x", nchw("N"));
    b.g.add_input(x);
    ValueId z = b.g.add_value("z", nchw(z_batch));
    b.g.add_input(z);
    ValueId c = b.node("Conv", {x, b.init("w", filled({2, 2, 1, 1}, 0.f, 1.f))}, "conv");
    b.output(b.node("Add", {c, z}, "add"));
    ASSERT_EQ(b.g.value(c).type.dims[0].param, "N");
    RewriteReport rep = run_rewrites(b.g, conv_matmul_rules(OptLevel::Extended), RewriteOptions{}, 17);
    EXPECT_EQ(rep.rules_fired["conv_residual_add"], std::string(z_batch) == "N" ? 1 : 0) << z_batch << ": " << b.dump();
  }
}

// Conv then hard-swish in the form the activations rules leave it at opset 11 (x * HardSigmoid(x)).
TEST(ConvFusions, HardSwishAsMulOfHardSigmoid) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId x = b.input("x", {1, 3, 6, 6});
    ValueId c = b.node("Conv", {x, b.init("w", filled({4, 3, 3, 3}, -0.6f, 0.08f))}, "conv");
    ValueId h = b.node("HardSigmoid", {c}, "hsig",
                       {Attribute::make_float("alpha", 1.f / 6.f), Attribute::make_float("beta", 0.5f)});
    b.output(b.node("Mul", {c, h}, "mul"));
  }, OptLevel::Extended, {{"x", {1, 3, 6, 6}}});
  ASSERT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  EXPECT_EQ(r->graph.producer_of("mul").attr_string("activation", ""), "HardSwish");
  EXPECT_LT(r->max_diff, 1e-5);
}

// A Pad of zeros on H and W in front of a Conv that states no pads (ONNX: zeros).
TEST(ConvFusions, ZeroPadFoldsIntoAConvWithoutPads) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId x = b.input("x", {1, 2, 7, 7});
    ValueId p = b.node("Pad", {x, b.ivec("pads", {0, 0, 1, 2, 0, 0, 2, 1})}, "pad");
    b.output(b.node("Conv", {p, b.init("w", filled({3, 2, 3, 3}, -0.5f, 0.1f))}, "conv"));
  }, OptLevel::Extended, {{"x", {1, 2, 7, 7}}});
  ASSERT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  EXPECT_EQ(r->graph.producer_of("conv").attr_ints("pads"), (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_LT(r->max_diff, 1e-5);
}

// Padding the channels, or with a non-zero value, is not a Conv's padding.
TEST(ConvFusions, ChannelOrNonZeroPadStays) {
  Build channel = [](GB& b) {
    ValueId p = b.node("Pad", {b.input("x", {1, 2, 5, 5}), b.ivec("pads", {0, 1, 1, 1, 0, 0, 1, 1})}, "pad");
    b.output(b.node("Conv", {p, b.init("w", filled({3, 3, 3, 3}, -0.5f, 0.1f))}, "conv"));
  };
  Build valued = [](GB& b) {
    ValueId p = b.node("Pad", {b.input("x", {1, 2, 5, 5}), b.ivec("pads", {0, 0, 1, 1, 0, 0, 1, 1}), b.scalar("v", 1.f)},
                       "pad");
    b.output(b.node("Conv", {p, b.init("w", filled({3, 2, 3, 3}, -0.5f, 0.1f))}, "conv"));
  };
  for (Build build : {channel, valued}) {
    auto r = rewrite_and_compare(build, OptLevel::Extended, {{"x", {1, 2, 5, 5}}});
    EXPECT_EQ(r->graph.count("Pad"), 1) << r->graph.dump();
    EXPECT_EQ(r->max_diff, 0.0);
  }
}

// A transformer Linear with its bias and Relu ([B, S, K] x [K, N] + [N]): one FusedMatMul.
TEST(MatMulFusions, BiasAndReluJoinARank3MatMul) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId a = b.input("a", {2, 5, 8});
    ValueId m = b.node("MatMul", {a, b.init("w", filled({8, 6}, -0.4f, 0.05f))}, "mm");
    ValueId y = b.node("Add", {b.init("bias", filled({6}, -0.3f, 0.1f)), m}, "add");
    b.output(b.node("Relu", {y}, "relu"));
  }, OptLevel::Extended, {{"a", {2, 5, 8}}});
  ASSERT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  const Node& n = r->graph.producer_of("relu");
  EXPECT_EQ(n.op, kFusedMatMul);
  EXPECT_EQ(n.attr_string("activation", ""), "Relu");
  EXPECT_LT(r->max_diff, 1e-5);
}

// Rank 2 with constant weights and bias becomes Gemm, then FusedGemm with the activation.
TEST(MatMulFusions, Rank2MatMulAddBecomesGemmThenFusedGemm) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId a = b.input("a", {4, 8});
    ValueId m = b.node("MatMul", {a, b.init("w", filled({8, 6}, -0.4f, 0.05f))}, "mm");
    ValueId y = b.node("Add", {m, b.init("bias", filled({6}, -0.3f, 0.1f))}, "add");
    b.output(b.node("Sigmoid", {y}, "sig"));
  }, OptLevel::Extended, {{"a", {4, 8}}});
  ASSERT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  EXPECT_EQ(r->graph.producer_of("sig").op, OpType(kFusorDomain, "FusedGemm"));
  EXPECT_EQ(r->report.rules_fired["matmul_add_gemm"], 1);
  EXPECT_LT(r->max_diff, 1e-5);
}

// At basic the same pair becomes ONNX's Gemm (as ORT's basic level does) and the activation stays.
TEST(MatMulFusions, Rank2MatMulAddIsGemmAtBasic) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId a = b.input("a", {4, 8});
    ValueId m = b.node("MatMul", {a, b.init("w", filled({8, 6}, -0.4f, 0.05f))}, "mm");
    ValueId y = b.node("Add", {m, b.init("bias", filled({6}, -0.3f, 0.1f))}, "add");
    b.output(b.node("Sigmoid", {y}, "sig"));
  }, OptLevel::Basic, {{"a", {4, 8}}});
  ASSERT_EQ(r->graph.g.num_nodes(), 2u) << r->graph.dump();
  EXPECT_EQ(r->graph.producer_of("add").op, OpType::onnx("Gemm"));
  EXPECT_EQ(r->report.rules_fired["matmul_add_gemm"], 1);
  EXPECT_LT(r->max_diff, 1e-5);
}

// Attention's scores: Q / sqrt(d) times K transposed on its last two axes.
TEST(MatMulFusions, ScaledQueryAndTransposedKeyFoldIntoAlphaAndTransB) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId q = b.input("q", {2, 4, 8});
    ValueId k = b.input("k", {2, 4, 8});
    ValueId qs = b.node("Div", {q, b.scalar("sqrt_d", 2.828427f)}, "div");
    ValueId kt = b.node("Transpose", {k}, "kt", {ints("perm", {0, 2, 1})});
    b.output(b.node("MatMul", {qs, kt}, "scores"));
  }, OptLevel::Extended, {{"q", {2, 4, 8}}, {"k", {2, 4, 8}}});
  ASSERT_EQ(r->graph.g.num_nodes(), 1u) << r->graph.dump();
  const Node& n = r->graph.producer_of("scores");
  EXPECT_EQ(n.op, kFusedMatMul);
  EXPECT_EQ(n.attr_int("transB", 0), 1);
  EXPECT_NEAR(n.attr_float("alpha", 1.f), 1.f / 2.828427f, 1e-6);
  EXPECT_LT(r->max_diff, 1e-5);
}

// A Transpose that moves a batch axis is not op(B): it stays.
TEST(MatMulFusions, TransposeOfOtherAxesStays) {
  auto r = rewrite_and_compare([](GB& b) {
    ValueId a = b.input("a", {2, 4, 8});
    ValueId k = b.input("k", {8, 2, 5});
    ValueId kt = b.node("Transpose", {k}, "kt", {ints("perm", {1, 0, 2})});
    b.output(b.node("MatMul", {a, kt}, "mm"));
  }, OptLevel::Extended, {{"a", {2, 4, 8}}, {"k", {8, 2, 5}}});
  EXPECT_EQ(r->graph.count("Transpose"), 1) << r->graph.dump();
  EXPECT_EQ(r->max_diff, 0.0);
}

// ---- the engine additions ----

TEST(ConvRulesEngine, OmittedPadsAreExplicitZerosUnlessAutoPad) {
  GB b;
  ValueId x = b.input("x", {1, 2, 5, 5});
  ValueId w = b.init("w", filled({2, 2, 3, 3}, 0.f, 1.f));
  b.node("Conv", {x, w}, "plain");
  b.node("Conv", {x, w}, "same", {Attribute::make_string("auto_pad", "SAME_UPPER")});
  b.node("MaxPool", {x}, "pool", {ints("kernel_shape", {2, 2})});
  const Attribute* p = nullptr;
  NormalizedNode plain = normalize_node(b.g, b.find("plain"));
  ASSERT_NE(p = plain.attr("pads"), nullptr);
  EXPECT_EQ(p->ints, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(normalize_node(b.g, b.find("same")).attr("pads"), nullptr);
  NormalizedNode pool = normalize_node(b.g, b.find("pool"));
  ASSERT_NE(p = pool.attr("pads"), nullptr);
  EXPECT_EQ(p->ints.size(), 4u);
}

TEST(ConvRulesEngine, FusedMatMulShapeIsInferredWithTransposes) {
  GB b;
  ValueId a = b.input("a", {3, 8, 5});
  ValueId w = b.input("w", {6, 8});
  ValueId out = b.g.add_value("y");
  NodeId id = b.g.add_node(kFusedMatMul, {a, w}, {out},
                           {Attribute::make_int("transA", 1), Attribute::make_int("transB", 1)}, "fmm");
  infer_node_types(b.g, id, 17);
  auto shape = b.g.value(out).type.static_shape();
  ASSERT_TRUE(shape.has_value()) << b.g.value(out).type.str();
  EXPECT_EQ(*shape, (Shape{3, 5, 6}));
}
