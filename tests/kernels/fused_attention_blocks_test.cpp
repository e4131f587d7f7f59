// The fast Attention kernel's key-block machinery: the online softmax row step of every ISA
// (attention_rows.h) against double-precision math, and the whole kernel against a naive
// double-precision attention written here and against the reference kernel, on every ISA path,
// in the cases the blocking makes delicate: scores whose row max grows from block to block (the
// output is rescaled), masks of -10000 and -inf, head sizes that are not a multiple of the vector
// width, causal masks over several key blocks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

#include "kernels/fused/attention_rows.h"
#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

const float kNinf = -std::numeric_limits<float>::infinity();

std::vector<Isa> isas() {
  std::vector<Isa> out = {Isa::Scalar};
  if (detect_isa() >= Isa::Avx2) out.push_back(Isa::Avx2);
  if (detect_isa() >= Isa::Avx512) out.push_back(Isa::Avx512);
  return out;
}

// FUSOR_ISA for the scope of one case (the fast kernels read active_isa() per call).
struct IsaScope {
  explicit IsaScope(Isa isa) { setenv("FUSOR_ISA", isa_name(isa), 1); }
  ~IsaScope() { unsetenv("FUSOR_ISA"); }
};

TEST(AttentionRows, SoftmaxStepMatchesDoubleMathOnEveryIsa) {
  for (Isa isa : isas()) {
    const fused::attn::RowOps& ops = fused::attn::row_ops(isa);
    // Two blocks of one row (lengths that leave vector tails); the second block's max is larger.
    std::vector<float> a = {0.5f, -1.0f, 2.0f, kNinf, 0.25f, 1.5f, -3.0f, 0.0f, 1.0f, 2.5f, -0.5f, 0.75f, 1.25f};
    std::vector<float> b = {4.0f, kNinf, 3.5f, -2.0f, 0.0f, 3.9f, 1.0f, -1.0f, 2.0f, 3.0f, kNinf, 0.5f, 1.0f,
                            2.0f, 3.0f, 3.25f, 0.1f, 0.2f, 0.3f};
    float m = kNinf, sum = 0.0f;
    std::vector<float> pa = a, pb = b;
    EXPECT_EQ(ops.softmax_step(pa.data(), static_cast<int64_t>(pa.size()), m, sum), 0.0f) << isa_name(isa);
    EXPECT_EQ(m, 2.5f);
    const float corr = ops.softmax_step(pb.data(), static_cast<int64_t>(pb.size()), m, sum);
    EXPECT_EQ(m, 4.0f);
    EXPECT_NEAR(corr, std::exp(2.5 - 4.0), 1e-6) << isa_name(isa);
    double want_sum = 0;
    for (float x : a) want_sum += std::exp(double(x) - 4.0);
    for (float x : b) want_sum += std::exp(double(x) - 4.0);
    EXPECT_NEAR(sum, want_sum, 1e-5 * want_sum) << isa_name(isa);
    for (size_t j = 0; j < b.size(); ++j) {
      if (b[j] == kNinf) EXPECT_EQ(pb[j], 0.0f) << isa_name(isa) << " key " << j;
      else EXPECT_NEAR(pb[j], std::exp(double(b[j]) - 4.0), 1e-6) << isa_name(isa) << " key " << j;
    }
    // A fully masked block changes nothing and zeroes its probabilities.
    std::vector<float> masked(21, kNinf);
    EXPECT_EQ(ops.softmax_step(masked.data(), 21, m, sum), 1.0f);
    EXPECT_EQ(m, 4.0f);
    for (float p : masked) EXPECT_EQ(p, 0.0f);
    // scale and add, with tails.
    std::vector<float> y = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
    std::vector<float> x(19, 0.5f);
    ops.scale(y.data(), 19, 2.0f);
    ops.add(y.data(), x.data(), 19);
    for (int j = 0; j < 19; ++j) EXPECT_EQ(y[j], 2.0f * (j + 1) + 0.5f) << isa_name(isa);
  }
}

// Softmax(Q K^T * scale + mask) V in double, every batch index with its own mask offset (the mask
// is given fully expanded to (batch, lq, lk), or empty).
Tensor naive_attention(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<float>& mask, float scale,
                       bool causal) {
  const int64_t lq = q.dim(-2), d = q.dim(-1), lk = k.dim(-2), dv = v.dim(-1);
  const int64_t batch = q.numel() / (lq * d);
  Shape out = q.shape();
  out.back() = dv;
  Tensor y(DataType::Float, out);
  std::vector<double> s(lk);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < lq; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < lk; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < d; ++e) acc += double(q.data<float>()[(b * lq + i) * d + e]) * k.data<float>()[(b * lk + j) * d + e];
        acc *= scale;
        if (!mask.empty()) acc += mask[(b * lq + i) * lk + j];
        if (causal && j > i + lk - lq) acc = -std::numeric_limits<double>::infinity();
        s[j] = acc;
        mx = std::max(mx, acc);
      }
      double sum = 0;
      for (int64_t j = 0; j < lk; ++j) sum += s[j] = std::exp(s[j] - mx);
      for (int64_t e = 0; e < dv; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < lk; ++j) acc += s[j] * v.data<float>()[(b * lk + j) * dv + e];
        y.data<float>()[(b * lq + i) * dv + e] = static_cast<float>(acc / sum);
      }
    }
  return y;
}

struct BlockCase {
  const char* what;
  int64_t batch, lq, lk, d, dv;
  bool mask = false, causal = false, growing = false;
};

TEST(AttentionBlocks, FastKernelMatchesNaiveAttentionOnEveryIsa) {
  const std::vector<BlockCase> cases = {
      {"one block, odd head sizes", 3, 5, 9, 13, 7},
      {"several key blocks, row max grows from block to block", 2, 70, 300, 16, 24, false, false, true},
      {"several blocks with a -10000 padding mask", 2, 33, 260, 32, 32, true},
      {"causal over several key blocks", 2, 150, 150, 8, 8, false, true},
      {"causal, fewer queries than keys, growing scores", 1, 7, 400, 16, 16, false, true, true},
      {"one query, long keys, mask", 4, 1, 513, 64, 64, true},
  };
  uint32_t seed = 11;
  for (const auto& c : cases) {
    Tensor q = rnd({c.batch, c.lq, c.d}, seed++), k = rnd({c.batch, c.lk, c.d}, seed++), v = rnd({c.batch, c.lk, c.dv}, seed++);
    if (c.growing)  // key j's first feature grows with j and every query's is positive: later blocks score higher
      for (int64_t b = 0; b < c.batch; ++b) {
        for (int64_t j = 0; j < c.lk; ++j) k.data<float>()[(b * c.lk + j) * c.d] = 0.05f * static_cast<float>(j);
        for (int64_t i = 0; i < c.lq; ++i) q.data<float>()[(b * c.lq + i) * c.d] = 1.0f;
      }
    std::vector<float> full;  // (batch, lq, lk) for the naive version
    Tensor mask;
    if (c.mask) {  // padding per batch: the last keys of each batch are masked with -10000
      mask = Tensor(DataType::Float, {c.batch, 1, 1, c.lk});
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t j = 0; j < c.lk; ++j) mask.data<float>()[b * c.lk + j] = j >= c.lk - 17 * (b + 1) ? -10000.0f : 0.0f;
      full.resize(static_cast<size_t>(c.batch * c.lq * c.lk));
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t i = 0; i < c.lq; ++i)
          for (int64_t j = 0; j < c.lk; ++j) full[(b * c.lq + i) * c.lk + j] = mask.data<float>()[b * c.lk + j];
      // Q, K, V as (batch, 1, l, d) so the mask broadcasts over the head axis.
      q = Tensor::from_vector<float>({c.batch, 1, c.lq, c.d}, std::vector<float>(q.data<float>(), q.data<float>() + q.numel()));
      k = Tensor::from_vector<float>({c.batch, 1, c.lk, c.d}, std::vector<float>(k.data<float>(), k.data<float>() + k.numel()));
      v = Tensor::from_vector<float>({c.batch, 1, c.lk, c.dv}, std::vector<float>(v.data<float>(), v.data<float>() + v.numel()));
    }
    const float scale = 0.7f;
    const Tensor want = naive_attention(q, k, v, full, scale, c.causal);
    std::vector<Tensor> ins{q, k, v};
    if (c.mask) ins.push_back(mask);
    const std::vector<Attribute> attrs{Attribute::make_float("scale", scale), Attribute::make_int("causal", c.causal)};
    EXPECT_TRUE(near(fused("Attention", ins, attrs, "reference"), want, 2e-5)) << c.what << " (reference)";
    for (Isa isa : isas()) {
      IsaScope scope(isa);
      EXPECT_TRUE(near(fused("Attention", ins, attrs, "fast"), want, 2e-5)) << c.what << " (" << isa_name(isa) << ")";
    }
  }
}

TEST(AttentionBlocks, KeyGivenTransposedMatchesAcrossBlocks) {
  const Tensor q = rnd({2, 40, 24}, 3), k = rnd({2, 200, 24}, 4), v = rnd({2, 200, 10}, 5);
  const Tensor kt = transpose(k, {0, 2, 1});
  const Tensor want = naive_attention(q, k, v, {}, 0.0f + 1.0f / std::sqrt(24.0f), false);
  for (Isa isa : isas()) {
    IsaScope scope(isa);
    EXPECT_TRUE(near(fused("Attention", {q, kt, v}, {Attribute::make_int("transpose_k", 1)}, "fast"), want, 2e-5))
        << isa_name(isa);
  }
}

}  // namespace
}  // namespace fusor::test
