// rules/extended/attention.rules with the whole extended set (matmul_fusions.rules turns scaled
// score products into FusedMatMul first): the attention of torch's nn.MultiheadAttention, of HF
// BERT and of the SDPA export, each into one fusor.Attention with the right scale and mask.
#include "shipped_rules.h"

using namespace fusor;
using namespace fusor::test;

namespace {

// Q (B, H, S, d); K^T from the per-head keys with Transpose<[0, 1, 3, 2]>, as exports do with a
// transposed K (here over a (B, H, S, d) input).
const Shape kQ = {2, 3, 10, 8};

Attribute perm(std::vector<int64_t> p) { return Attribute::make_ints("perm", std::move(p)); }
Attribute softmax_last() { return Attribute::make_int("axis", -1); }

TEST(AttentionRules, BertDivScoresWithMask) {
  auto f = fuse([](GB& b) {
    ValueId q = b.input("q", kQ), k = b.input("k", {2, 10, 3, 8}), v = b.input("v", kQ), m = b.input("mask", {2, 1, 1, 10});
    ValueId kt = b.node("Transpose", {k}, "kt", {perm({0, 2, 3, 1})});
    ValueId s = b.node("Div", {b.node("MatMul", {q, kt}, "qk"), b.scalar("sqrt_d", 2.828427f)}, "scaled");
    ValueId p = b.node("Softmax", {b.node("Add", {s, m}, "masked")}, "softmax", {softmax_last()});
    b.output(b.node("MatMul", {p, v}, "y"));
  }, {{"q", kQ}, {"k", {2, 10, 3, 8}}, {"v", kQ}, {"mask", {2, 1, 1, 10}}});
  ASSERT_EQ(f->count("Attention"), 1) << f->graph.dump();
  const Node* a = f->only("Attention");
  EXPECT_NEAR(a->attr_float("scale", 0.f), 1.0f / 2.828427f, 1e-6);
  EXPECT_EQ(a->attr_int("transpose_k", 0), 1);
  EXPECT_EQ(a->inputs.size(), 4u);
  EXPECT_EQ(f->graph.g.num_nodes(), 2u) << f->graph.dump();  // the K transpose stays
  EXPECT_LT(f->max_diff, 1e-5);
}

// nn.MultiheadAttention: Q divided before the product, K^T by Transpose<[1, 2, 0]> of (S, B*H, d).
TEST(AttentionRules, MultiheadAttentionDivOnQuery) {
  auto f = fuse([](GB& b) {
    ValueId q = b.input("q", {6, 10, 8}), k = b.input("k", {10, 6, 8}), v = b.input("v", {6, 10, 8});
    ValueId kt = b.node("Transpose", {k}, "kt", {perm({1, 2, 0})});
    ValueId s = b.node("MatMul", {b.node("Div", {q, b.scalar("sqrt_d", 2.828427f)}, "qs"), kt}, "qk");
    b.output(b.node("MatMul", {b.node("Softmax", {s}, "softmax", {softmax_last()}), v}, "y"));
  }, {{"q", {6, 10, 8}}, {"k", {10, 6, 8}}, {"v", {6, 10, 8}}});
  ASSERT_EQ(f->count("Attention"), 1) << f->graph.dump();
  EXPECT_NEAR(f->only("Attention")->attr_float("scale", 0.f), 1.0f / 2.828427f, 1e-6);
  EXPECT_EQ(f->only("Attention")->inputs.size(), 3u);
  EXPECT_LT(f->max_diff, 1e-5);
}

// SDPA: sqrt(scale) on Q and on K^T, an additive float mask.
TEST(AttentionRules, SdpaScaleOnQueryAndKey) {
  auto f = fuse([](GB& b) {
    ValueId q = b.input("q", kQ), k = b.input("k", kQ), v = b.input("v", kQ), m = b.input("mask", {10, 10});
    ValueId qs = b.node("Mul", {q, b.scalar("sq", 0.5946f)}, "qs");
    ValueId ks = b.node("Mul", {b.node("Transpose", {k}, "kt", {perm({0, 1, 3, 2})}), b.scalar("sk", 0.5946f)}, "ks");
    ValueId s = b.node("Add", {b.node("MatMul", {qs, ks}, "qk"), m}, "masked");
    b.output(b.node("MatMul", {b.node("Softmax", {s}, "softmax", {softmax_last()}), v}, "y"));
  }, {{"q", kQ}, {"k", kQ}, {"v", kQ}, {"mask", {10, 10}}});
  ASSERT_EQ(f->count("Attention"), 1) << f->graph.dump();
  EXPECT_NEAR(f->only("Attention")->attr_float("scale", 0.f), 0.5946f * 0.5946f, 1e-6);
  EXPECT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();  // a swap-last-two K transpose is absorbed
  EXPECT_LT(f->max_diff, 1e-5);
}

TEST(AttentionRules, SoftmaxOverAnotherAxisStays) {
  auto f = fuse([](GB& b) {
    ValueId q = b.input("q", kQ), kt = b.input("kt", {2, 3, 8, 10}), v = b.input("v", kQ);
    ValueId s = b.node("MatMul", {q, kt}, "qk");
    b.output(b.node("MatMul", {b.node("Softmax", {s}, "softmax", {Attribute::make_int("axis", 2)}), v}, "y"));
  }, {{"q", kQ}, {"kt", {2, 3, 8, 10}}, {"v", kQ}});
  EXPECT_EQ(f->count("Attention"), 0) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-6);
}

}  // namespace
