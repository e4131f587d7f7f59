// fusor.MultiHeadAttention and fusor.PackedAttention (heads read and written in the projections'
// layout through strides) against fusor.Attention's reference kernel on the heads split out and
// merged back by ONNX Transposes: batch-first and sequence-first layouts, float and bool masks,
// causal (also given as a constant mask the fast kernel turns into causal), sequences over
// several key blocks, every ISA path; shape errors are bad input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {
namespace {

std::vector<Isa> isas() {
  std::vector<Isa> out = {Isa::Scalar};
  if (detect_isa() >= Isa::Avx2) out.push_back(Isa::Avx2);
  if (detect_isa() >= Isa::Avx512) out.push_back(Isa::Avx512);
  return out;
}


// (B, S, H * w) or, seq_first, (S, B, H * w) -> (B, H, S, w), and back.
Tensor split(const Tensor& x, int64_t heads, bool seq_first) {
  const Tensor r = x.reshaped({x.dim(0), x.dim(1), heads, x.dim(2) / heads});
  return transpose(r, seq_first ? std::vector<int64_t>{1, 2, 0, 3} : std::vector<int64_t>{0, 2, 1, 3});
}

Tensor merge(const Tensor& y, bool seq_first) {
  const Tensor t = transpose(y, seq_first ? std::vector<int64_t>{2, 0, 1, 3} : std::vector<int64_t>{0, 2, 1, 3});
  return t.reshaped({t.dim(0), t.dim(1), t.dim(2) * t.dim(3)});
}

// Columns [part * w, (part + 1) * w) of a rank-3 tensor's last axis.
Tensor columns(const Tensor& x, int part, int64_t w) {
  Tensor out(DataType::Float, {x.dim(0), x.dim(1), w});
  for (int64_t r = 0; r < x.dim(0) * x.dim(1); ++r)
    for (int64_t c = 0; c < w; ++c) out.data<float>()[r * w + c] = x.data<float>()[r * x.dim(2) + part * w + c];
  return out;
}

struct MhaCase {
  const char* what;
  int64_t b, sq, sk, heads, d, dv;
  bool seq_first = false, causal = false;
  Shape mask;  // empty: none; a float mask unless bool_mask
  bool bool_mask = false;
};

Tensor make_mask(const MhaCase& c, uint32_t seed) {
  if (c.mask.empty()) return Tensor();
  if (!c.bool_mask) return rnd(c.mask, seed, -3.0f, 1.0f);
  Tensor m(DataType::Bool, c.mask);
  const int64_t lk = c.mask.back();
  for (int64_t i = 0; i < m.numel(); ++i) m.data<bool>()[i] = (i % lk) == 0 || ((i * 7 + seed) % 5) != 0;
  return m;
}

TEST(MultiHeadAttention, FastAndReferenceMatchAttentionOnSplitHeads) {
  const std::vector<MhaCase> cases = {
      {"short, float mask per batch", 2, 7, 9, 4, 8, 6, false, false, {2, 1, 1, 9}, false},
      {"sequence first", 3, 5, 11, 2, 16, 16, true, false, {}, false},
      {"bool mask per query and head", 1, 6, 10, 3, 8, 8, false, false, {1, 3, 6, 10}, true},
      {"causal, fewer queries than keys", 2, 3, 12, 2, 8, 8, false, true, {}, false},
      {"long: key blocks and query tiles with tails", 1, 150, 300, 3, 64, 32, false, false, {300}, false},
      {"long causal, head size 32", 2, 130, 130, 2, 32, 32, false, true, {}, false},
  };
  uint32_t seed = 5;
  for (const auto& c : cases) {
    const Shape qs = c.seq_first ? Shape{c.sq, c.b, c.heads * c.d} : Shape{c.b, c.sq, c.heads * c.d};
    const Shape ks = c.seq_first ? Shape{c.sk, c.b, c.heads * c.d} : Shape{c.b, c.sk, c.heads * c.d};
    const Shape vs = c.seq_first ? Shape{c.sk, c.b, c.heads * c.dv} : Shape{c.b, c.sk, c.heads * c.dv};
    const Tensor q = rnd(qs, seed++), k = rnd(ks, seed++), v = rnd(vs, seed++);
    const Tensor mask = make_mask(c, seed++);
    const std::vector<Attribute> attrs{Attribute::make_float("scale", 0.3f), Attribute::make_int("causal", c.causal)};
    std::vector<Tensor> split_ins{split(q, c.heads, c.seq_first), split(k, c.heads, c.seq_first), split(v, c.heads, c.seq_first)};
    if (mask.defined()) split_ins.push_back(mask);
    const Tensor want = merge(fused("Attention", split_ins, attrs, "reference"), c.seq_first);
    std::vector<Attribute> mha = attrs;
    mha.push_back(Attribute::make_int("head_size", c.d));
    mha.push_back(Attribute::make_int("seq_first", c.seq_first));
    std::vector<Tensor> ins{q, k, v};
    if (mask.defined()) ins.push_back(mask);
    EXPECT_TRUE(near(fused("MultiHeadAttention", ins, mha, "reference"), want, 1e-5)) << c.what << " (reference)";
    for (Isa isa : isas()) {
      IsaScope scope(isa);
      EXPECT_TRUE(near(fused("MultiHeadAttention", ins, mha, "fast"), want, 2e-5)) << c.what << " (" << isa_name(isa) << ")";
    }
  }
}

TEST(PackedAttention, FastAndReferenceMatchAttentionOnTheThreeParts) {
  struct PackedCase {
    const char* what;
    int64_t b, s, heads, d;
    bool seq_first, causal;
  };
  const std::vector<PackedCase> cases = {
      {"short", 2, 10, 2, 8, false, false},
      {"causal over several key blocks", 1, 200, 4, 32, false, true},
      {"sequence first, batch of one", 1, 70, 3, 16, true, false},
      {"sequence first, causal, batch of two", 2, 33, 2, 8, true, true},
  };
  uint32_t seed = 50;
  for (const auto& c : cases) {
    const int64_t e = c.heads * c.d;
    const Tensor x = rnd(c.seq_first ? Shape{c.s, c.b, 3 * e} : Shape{c.b, c.s, 3 * e}, seed++);
    const std::vector<Attribute> attrs{Attribute::make_float("scale", 0.0f), Attribute::make_int("causal", c.causal)};
    const Tensor want = merge(fused("Attention",
                                    {split(columns(x, 0, e), c.heads, c.seq_first), split(columns(x, 1, e), c.heads, c.seq_first),
                                     split(columns(x, 2, e), c.heads, c.seq_first)},
                                    attrs, "reference"),
                              c.seq_first);
    std::vector<Attribute> packed = attrs;
    packed.push_back(Attribute::make_int("head_size", c.d));
    packed.push_back(Attribute::make_int("seq_first", c.seq_first));
    EXPECT_TRUE(near(fused("PackedAttention", {x}, packed, "reference"), want, 1e-5)) << c.what << " (reference)";
    for (Isa isa : isas()) {
      IsaScope scope(isa);
      EXPECT_TRUE(near(fused("PackedAttention", {x}, packed, "fast"), want, 2e-5)) << c.what << " (" << isa_name(isa) << ")";
    }
  }
}

// A constant causal mask (bool, or float 0 / -inf) is run as causal by the fast kernels; a
// constant mask that is not causal is applied as given.
TEST(PackedAttention, ConstantMasksCausalOrNot) {
  const int64_t s = 90, heads = 2, d = 16, e = heads * d;
  const Tensor x = rnd({1, s, 3 * e}, 77);
  const float ninf = -std::numeric_limits<float>::infinity();
  Tensor causal_bool(DataType::Bool, {1, 1, s, s}), causal_float(DataType::Float, {s, s}), banded(DataType::Float, {s, s});
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < s; ++j) {
      causal_bool.data<bool>()[i * s + j] = j <= i;
      causal_float.data<float>()[i * s + j] = j <= i ? 0.0f : ninf;
      banded.data<float>()[i * s + j] = j <= i && j + 8 > i ? 0.0f : ninf;  // not causal: a window of 8
    }
  const std::vector<Attribute> attrs{Attribute::make_int("head_size", d)};
  const Tensor causal = fused("PackedAttention", {x}, {Attribute::make_int("head_size", d), Attribute::make_int("causal", 1)},
                              "reference");
  for (const Tensor& m : {causal_bool, causal_float}) {
    EXPECT_TRUE(near(fused("PackedAttention", {x, m}, attrs, "fast", {false, true}), causal, 2e-5));
    EXPECT_TRUE(near(fused("PackedAttention", {x, m}, attrs, "reference", {false, true}), causal, 1e-5));
  }
  const Tensor want = fused("PackedAttention", {x, banded}, attrs, "reference");
  EXPECT_TRUE(near(fused("PackedAttention", {x, banded}, attrs, "fast", {false, true}), want, 2e-5));
  EXPECT_FALSE(near(want, causal, 1e-3));
}

TEST(MultiHeadAttention, ShapeErrorsAreBadInput) {
  const Tensor q = rnd({2, 5, 12}, 1), k = rnd({2, 7, 12}, 2), v = rnd({2, 7, 12}, 3);
  for (const char* impl : {"fast", "reference"}) {
    EXPECT_THROW(fused("MultiHeadAttention", {q, k, v}, {Attribute::make_int("head_size", 5)}, impl), Error) << impl;
    EXPECT_THROW(fused("MultiHeadAttention", {q, k, v}, {Attribute::make_int("head_size", 0)}, impl), Error) << impl;
    EXPECT_THROW(fused("MultiHeadAttention", {q, rnd({2, 7, 8}, 4), v}, {Attribute::make_int("head_size", 6)}, impl), Error)
        << impl;
    EXPECT_THROW(fused("MultiHeadAttention", {q, k, rnd({2, 6, 12}, 5)}, {Attribute::make_int("head_size", 6)}, impl), Error)
        << impl;
    EXPECT_THROW(fused("PackedAttention", {rnd({2, 5, 20}, 6)}, {Attribute::make_int("head_size", 4)}, impl), Error) << impl;
    EXPECT_THROW(fused("PackedAttention", {rnd({10, 12}, 7)}, {Attribute::make_int("head_size", 2)}, impl), Error) << impl;
  }
}

}  // namespace
}  // namespace fusor::test
