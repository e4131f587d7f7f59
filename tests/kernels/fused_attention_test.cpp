// Attention: the fast (tiled, online-softmax) kernel and the reference kernel against
// MatMul/Mul/Add/Softmax/MatMul run through ONNX's reference kernels, on short sequences and on
// sequences longer than the kernel's key blocks and query tiles, with float masks broadcast over
// batch and heads, bool masks, causal masking (also with fewer queries than keys) and K given
// already transposed.
#include <gtest/gtest.h>

#include <limits>

#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

struct AttnCase {
  const char* what;
  Shape q, k, v, mask;  // mask empty: none
  bool bool_mask = false, causal = false, transpose_k = false;
  float scale = 0.0f;
};

// Softmax(Q K^T * scale + mask) V, the additive form of every mask written out.
Tensor composition(const AttnCase& c, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  const int r = q.rank();
  std::vector<int64_t> perm;
  for (int i = 0; i < r; ++i) perm.push_back(i);
  std::swap(perm[r - 1], perm[r - 2]);
  const Tensor kt = c.transpose_k ? k : transpose(k, perm);
  const float scale = c.scale != 0.0f ? c.scale : 1.0f / std::sqrt(static_cast<float>(q.dim(-1)));
  Tensor s = onnx_op("Mul", {onnx_op("MatMul", {q, kt}), scalar(scale)});
  if (mask.defined()) {
    Tensor add = mask;
    if (c.bool_mask) {
      add = Tensor(DataType::Float, mask.shape());
      for (int64_t i = 0; i < mask.numel(); ++i)
        add.data<float>()[i] = mask.data<bool>()[i] ? 0.0f : -std::numeric_limits<float>::infinity();
    }
    s = onnx_op("Add", {s, add});
  }
  if (c.causal) {
    const int64_t lq = q.dim(-2), lk = s.dim(-1);
    Tensor cm(DataType::Float, {lq, lk});
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t j = 0; j < lk; ++j)
        cm.data<float>()[i * lk + j] = j <= i + (lk - lq) ? 0.0f : -std::numeric_limits<float>::infinity();
    s = onnx_op("Add", {s, cm});
  }
  return onnx_op("MatMul", {onnx_op("Softmax", {s}, {Attribute::make_int("axis", -1)}), v});
}

Tensor random_mask(const AttnCase& c, uint32_t seed) {
  if (c.mask.empty()) return Tensor();
  if (!c.bool_mask) return rnd(c.mask, seed, -2.0f, 1.0f);
  Tensor m(DataType::Bool, c.mask);
  std::mt19937 g(seed);
  const int64_t lk = c.mask.back();
  for (int64_t i = 0; i < m.numel(); ++i)
    m.data<bool>()[i] = (i % lk) == 0 || (g() % 4) != 0;  // key 0 always visible: no fully masked row
  return m;
}

TEST(FusedAttention, FastAndReferenceMatchTheComposition) {
  const std::vector<AttnCase> cases = {
      {"short", {2, 5, 8}, {2, 7, 8}, {2, 7, 6}, {}},
      {"single query", {1, 2, 1, 16}, {1, 2, 9, 16}, {1, 2, 9, 16}, {}},
      {"float mask over keys", {2, 3, 6, 4}, {2, 3, 10, 4}, {2, 3, 10, 5}, {10}},
      {"float mask per batch, broadcast over heads", {2, 3, 6, 4}, {2, 3, 10, 4}, {2, 3, 10, 5}, {2, 1, 1, 10}},
      {"bool mask per query", {2, 2, 6, 4}, {2, 2, 10, 4}, {2, 2, 10, 3}, {1, 1, 6, 10}, true},
      {"causal, square", {1, 2, 19, 8}, {1, 2, 19, 8}, {1, 2, 19, 8}, {}, false, true},
      {"causal, 3 new queries over 12 keys", {2, 3, 8}, {2, 12, 8}, {2, 12, 8}, {}, false, true},
      {"K transposed, explicit scale", {2, 5, 8}, {2, 8, 7}, {2, 7, 6}, {}, false, false, true, 0.3f},
      {"long: tiles and key blocks with tails", {2, 3, 300, 32}, {2, 3, 300, 32}, {2, 3, 300, 24}, {300}},
      {"long causal with bool mask", {1, 2, 257, 16}, {1, 2, 257, 16}, {1, 2, 257, 16}, {1, 1, 257, 257}, true, true},
      {"long K transposed", {4, 130, 20}, {4, 20, 200}, {4, 200, 12}, {4, 1, 200}, false, false, true},
      // No mask, keys past a multiple of the vector (the one-vector scores tile's two chains, the
      // four running maxima and their remainder), an odd head size.
      {"odd head size, 5 keys past 64", {1, 2, 23, 13}, {1, 2, 69, 13}, {1, 2, 69, 7}, {}},
      {"vit_tiny's 197 keys of 64", {1, 3, 197, 64}, {1, 3, 197, 64}, {1, 3, 197, 64}, {}},
  };
  uint32_t seed = 1;
  for (const auto& c : cases) {
    const Tensor q = rnd(c.q, seed++), k = rnd(c.k, seed++), v = rnd(c.v, seed++);
    const Tensor mask = random_mask(c, seed++);
    std::vector<Attribute> attrs{Attribute::make_int("causal", c.causal), Attribute::make_int("transpose_k", c.transpose_k),
                                 Attribute::make_float("scale", c.scale)};
    std::vector<Tensor> ins{q, k, v};
    if (mask.defined()) ins.push_back(mask);
    const Tensor want = composition(c, q, k, v, mask);
    EXPECT_TRUE(near(fused("Attention", ins, attrs, "reference"), want, 1e-5)) << c.what;
    EXPECT_TRUE(near(fused("Attention", ins, attrs, "fast"), want, 1e-5)) << c.what;
  }
}

TEST(FusedAttention, FullyMaskedRowIsZeroInTheFastKernel) {
  const Tensor q = rnd({1, 3, 4}, 1), k = rnd({1, 5, 4}, 2), v = rnd({1, 5, 2}, 3);
  Tensor mask(DataType::Bool, {3, 5});
  for (int64_t i = 0; i < 15; ++i) mask.data<bool>()[i] = i >= 5;  // query 0 sees nothing
  const Tensor y = fused("Attention", {q, k, v, mask}, {}, "fast");
  EXPECT_EQ(y.data<float>()[0], 0.0f);
  EXPECT_EQ(y.data<float>()[1], 0.0f);
}

TEST(FusedAttention, ShapeErrorsAreBadInput) {
  const Tensor q = rnd({2, 5, 8}, 1), k = rnd({2, 7, 6}, 2), v = rnd({2, 7, 6}, 3);
  EXPECT_THROW(fused("Attention", {q, k, v}, {}, "fast"), Error);
  EXPECT_THROW(fused("Attention", {q, k, v}, {}, "reference"), Error);
  const Tensor k8 = rnd({2, 7, 8}, 4), v6 = rnd({2, 6, 6}, 5);
  EXPECT_THROW(fused("Attention", {q, k8, v6}, {}, "fast"), Error);
}

}  // namespace
}  // namespace fusor::test
