// rules/extended/attention.rules on whole attention blocks as exporters write them, with the head
// split and merge around the attention: the BERT style (separate Q/K/V, Reshape + Transpose per
// head, additive mask), the GPT-2 style (one QKV projection cut by a Split, a causal mask given by
// Where(mask, -inf, scores)) and torch's sequence-first nn.MultiheadAttention (three Slices of
// one projection). After the extended set no Transpose, Slice or Split is left; the outputs agree
// with the original graph.
#include <limits>

#include "shipped_rules.h"

using namespace fusor;
using namespace fusor::test;

namespace {

Attribute perm(std::vector<int64_t> p) { return Attribute::make_ints("perm", std::move(p)); }
Attribute softmax_last() { return Attribute::make_int("axis", -1); }

int plain(const Fused& f, const char* op) { return f.graph.count(op); }

// B = 2, S = 10, 3 heads of 8.
TEST(AttentionHeadsRules, BertBlockKeepsHeadsInPlace) {
  auto f = fuse([](GB& b) {
    ValueId q = b.input("q", {2, 10, 24}), k = b.input("k", {2, 10, 24}), v = b.input("v", {2, 10, 24});
    ValueId m = b.input("mask", {2, 1, 1, 10});
    ValueId split = b.ivec("split", {2, 10, 3, 8});
    ValueId qh = b.node("Transpose", {b.node("Reshape", {q, split}, "qr")}, "qh", {perm({0, 2, 1, 3})});
    ValueId kt = b.node("Transpose", {b.node("Reshape", {k, split}, "kr")}, "kt", {perm({0, 2, 3, 1})});
    ValueId vh = b.node("Transpose", {b.node("Reshape", {v, split}, "vr")}, "vh", {perm({0, 2, 1, 3})});
    ValueId s = b.node("Div", {b.node("MatMul", {qh, kt}, "qk"), b.scalar("sqrt_d", 2.828427f)}, "scaled");
    ValueId p = b.node("Softmax", {b.node("Add", {s, m}, "masked")}, "softmax", {softmax_last()});
    ValueId y = b.node("Transpose", {b.node("MatMul", {p, vh}, "pv")}, "merge", {perm({0, 2, 1, 3})});
    b.output(b.node("Reshape", {y, b.ivec("merged", {2, 10, 24})}, "y"));
  }, {{"q", {2, 10, 24}}, {"k", {2, 10, 24}}, {"v", {2, 10, 24}}, {"mask", {2, 1, 1, 10}}});
  ASSERT_EQ(f->count("MultiHeadAttention"), 1) << f->graph.dump();
  EXPECT_EQ(f->only("MultiHeadAttention")->attr_int("head_size", 0), 8);
  EXPECT_EQ(plain(*f, "Transpose"), 0) << f->graph.dump();
  EXPECT_EQ(plain(*f, "Reshape"), 0) << f->graph.dump();
  EXPECT_EQ(f->graph.g.num_nodes(), 1u) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

// GPT-2: QKV (1, 12, 3 * 16) -> Split -> heads of 8; scores scaled by a Mul; the causal mask as a
// constant bool "masked" matrix in Where.
TEST(AttentionHeadsRules, GptBlockReadsTheFusedProjection) {
  const int64_t s = 12;
  Tensor masked(DataType::Bool, {1, 1, s, s});
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < s; ++j) masked.data<bool>()[i * s + j] = j > i;
  auto f = fuse([&](GB& b) {
    ValueId x = b.input("x", {1, s, 48});
    const auto qkv = b.nodes("Split", {x}, "split", 3, {Attribute::make_int("axis", 2)});
    ValueId split = b.ivec("heads", {1, s, 2, 8});
    ValueId qh = b.node("Transpose", {b.node("Reshape", {qkv[0], split}, "qr")}, "qh", {perm({0, 2, 1, 3})});
    ValueId kt = b.node("Transpose", {b.node("Reshape", {qkv[1], split}, "kr")}, "kt", {perm({0, 2, 3, 1})});
    ValueId vh = b.node("Transpose", {b.node("Reshape", {qkv[2], split}, "vr")}, "vh", {perm({0, 2, 1, 3})});
    ValueId sc = b.node("Mul", {b.node("MatMul", {qh, kt}, "qk"), b.scalar("scale", 0.3535534f)}, "scaled");
    ValueId w = b.node("Where", {b.init("causal", masked), b.scalar("ninf", -std::numeric_limits<float>::infinity()), sc},
                       "masked");
    ValueId p = b.node("Softmax", {w}, "softmax", {softmax_last()});
    ValueId y = b.node("Transpose", {b.node("MatMul", {p, vh}, "pv")}, "merge", {perm({0, 2, 1, 3})});
    b.output(b.node("Reshape", {y, b.ivec("merged", {1, s, 16})}, "y"));
  }, {{"x", {1, s, 48}}});
  ASSERT_EQ(f->count("PackedAttention"), 1) << f->graph.dump();
  EXPECT_EQ(f->only("PackedAttention")->attr_int("head_size", 0), 8);
  EXPECT_NEAR(f->only("PackedAttention")->attr_float("scale", 0.f), 0.3535534f, 1e-6);
  EXPECT_EQ(plain(*f, "Transpose"), 0) << f->graph.dump();
  EXPECT_EQ(plain(*f, "Split"), 0) << f->graph.dump();
  EXPECT_EQ(plain(*f, "Where"), 0) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

// nn.MultiheadAttention, sequence first: x (L = 9, N = 1, 3 * 24) cut by three Slices, each
// reshaped to (L, N * H, d) and transposed to (N * H, L, d); Q divided by sqrt(d).
TEST(AttentionHeadsRules, SequenceFirstBlockReadsTheFusedProjection) {
  auto f = fuse([](GB& b) {
    ValueId x = b.input("x", {9, 1, 72});
    ValueId axes = b.ivec("axes", {2});
    auto part = [&](int i, const char* n) {
      return b.node("Slice", {x, b.ivec(std::string(n) + "_s", {24 * i}), b.ivec(std::string(n) + "_e", {24 * (i + 1)}), axes}, n);
    };
    ValueId heads = b.ivec("heads", {9, 3, 8});
    ValueId qh = b.node("Transpose", {b.node("Reshape", {part(0, "q"), heads}, "qr")}, "qh", {perm({1, 0, 2})});
    ValueId kt = b.node("Transpose", {b.node("Reshape", {part(1, "k"), heads}, "kr")}, "kt", {perm({1, 2, 0})});
    ValueId vh = b.node("Transpose", {b.node("Reshape", {part(2, "v"), heads}, "vr")}, "vh", {perm({1, 0, 2})});
    ValueId qs = b.node("Div", {qh, b.scalar("sqrt_d", 2.828427f)}, "qs");
    ValueId p = b.node("Softmax", {b.node("MatMul", {qs, kt}, "qk")}, "softmax", {softmax_last()});
    ValueId y = b.node("Transpose", {b.node("MatMul", {p, vh}, "pv")}, "merge", {perm({1, 0, 2})});
    b.output(b.node("Reshape", {y, b.ivec("merged", {9, 24})}, "y"));
  }, {{"x", {9, 1, 72}}});
  ASSERT_EQ(f->count("PackedAttention"), 1) << f->graph.dump();
  EXPECT_EQ(f->only("PackedAttention")->attr_int("seq_first", 0), 1);
  EXPECT_EQ(plain(*f, "Transpose"), 0) << f->graph.dump();
  EXPECT_EQ(plain(*f, "Slice"), 0) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

// A head split whose Reshape is not one (heads interleaved differently: (B, S, d, H)) stays.
TEST(AttentionHeadsRules, ReshapeThatIsNotAHeadSplitStays) {
  auto f = fuse([](GB& b) {
    ValueId q = b.input("q", {2, 10, 24}), k = b.input("k", {2, 10, 24}), v = b.input("v", {2, 10, 24});
    ValueId split = b.ivec("split", {2, 10, 8, 3});
    ValueId qh = b.node("Transpose", {b.node("Reshape", {q, split}, "qr")}, "qh", {perm({0, 3, 1, 2})});
    ValueId kt = b.node("Transpose", {b.node("Reshape", {k, split}, "kr")}, "kt", {perm({0, 3, 2, 1})});
    ValueId vh = b.node("Transpose", {b.node("Reshape", {v, split}, "vr")}, "vh", {perm({0, 3, 1, 2})});
    ValueId p = b.node("Softmax", {b.node("MatMul", {qh, kt}, "qk")}, "softmax", {softmax_last()});
    ValueId y = b.node("Transpose", {b.node("MatMul", {p, vh}, "pv")}, "merge", {perm({0, 2, 1, 3})});
    b.output(b.node("Reshape", {y, b.ivec("merged", {2, 10, 24})}, "y"));
  }, {{"q", {2, 10, 24}}, {"k", {2, 10, 24}}, {"v", {2, 10, 24}}});
  EXPECT_EQ(f->count("MultiHeadAttention"), 0) << f->graph.dump();
  EXPECT_EQ(f->count("Attention"), 1) << f->graph.dump();
  EXPECT_LT(f->max_diff, 1e-5);
}

}  // namespace
