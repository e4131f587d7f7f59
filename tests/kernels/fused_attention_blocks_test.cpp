// The fast Attention kernel's key-block machinery: the K transposition of every ISA
// (flash_attention_tile.h), and the whole kernel against a naive
// double-precision attention written here and against the reference kernel, on every ISA path,
// in the cases the blocking makes delicate: scores whose row max grows from block to block (the
// output is rescaled), masks of -10000 and -inf, head sizes that are not a multiple of the vector
// width, causal masks over several key blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>
#include <limits>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "kernels/fused/flash_attention.h"
#include "kernels/fused/flash_attention_tile.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {
namespace {

const float kNinf = -std::numeric_limits<float>::infinity();

std::vector<Isa> isas() {
  std::vector<Isa> out = {Isa::Scalar};
  if (detect_isa() >= Isa::Avx2) out.push_back(Isa::Avx2);
  if (detect_isa() >= Isa::Avx512) out.push_back(Isa::Avx512);
  return out;
}


TEST(AttentionTile, KeyTransposeMatchesOnEveryIsa) {
  // 37 keys x 35 columns (16 x 16 blocks and tails), keys 41 floats apart.
  const int64_t n = 37, d = 35, key = 41, ld = 48;
  std::vector<float> k(static_cast<size_t>(n * key));
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>(i) * 0.5f - 3.0f;
  for (Isa isa : isas()) {
    std::vector<float> dst(static_cast<size_t>(d * ld), -1.0f);
    fused::flash::tile_fns(isa).transpose_k(k.data(), key, 1, n, d, dst.data(), ld);
    for (int64_t c = 0; c < d; ++c)
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(dst[c * ld + j], k[j * key + c]) << isa_name(isa) << " " << c << "," << j;
    // Columns of a matrix with strided columns (dim != 1).
    std::vector<float> dst2(static_cast<size_t>(d * ld), -1.0f);
    fused::flash::tile_fns(isa).transpose_k(k.data(), 1, key, n, d, dst2.data(), ld);
    for (int64_t c = 0; c < d; ++c)
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(dst2[c * ld + j], k[c * key + j]) << isa_name(isa);
  }
}

// The kernel's scratch: 64-byte aligned blocks that live as long as the object.
struct Scratch {
  std::vector<std::vector<char>> blocks;
  void* operator()(size_t bytes) {
    blocks.emplace_back(bytes + 64);
    return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(blocks.back().data()) + 63) & ~uintptr_t(63));
  }
};

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

// The tasks (head, tile of query rows) are shared out one at a time: 2 threads give the 1-thread
// result bit for bit (no task depends on which thread runs it or on what ran before), for
// enough heads and tiles that the tile size is the same at both counts, causal or not, with K
// transposed by the kernel (3 heads of 64: the transposition itself split over both threads in
// blocks of keys, the last one short); and both match the naive attention.
TEST(AttentionBlocks, TwoThreadsGiveOneThreadsResultBitForBit) {
  for (const auto& [heads, d] : {std::pair<int64_t, int64_t>{5, 24}, {3, 64}}) {
    const int64_t s = 203, e = heads * d;
    const Tensor q = rnd({1, s, e}, 21), k = rnd({1, s, e}, 22), v = rnd({1, s, e}, 23);
    for (bool causal : {false, true})
      for (Isa isa : isas()) {
        std::vector<float> y[2];
        for (int threads : {1, 2}) {
          Scratch scratch;
          std::vector<float>& out = y[threads - 1];
          out.assign(static_cast<size_t>(s * e), std::nanf(""));
          fused::AttnProblem p;
          p.batch = 1, p.heads = heads, p.sq = s, p.sk = s, p.d = d, p.dv = d;
          p.q = {q.data<float>(), s * e, d, e};
          p.v = {v.data<float>(), s * e, d, e};
          p.k = k.data<float>(), p.k_batch = s * e, p.k_head = d, p.k_key = e, p.k_dim = 1;
          p.y = out.data(), p.y_batch = s * e, p.y_head = d, p.y_row = e;
          p.scale = 0.3f;
          p.causal = causal;
          ThreadPool pool(threads);
          fused::flash_attention(p, pool, std::ref(scratch), isa);
        }
        EXPECT_EQ(std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float)), 0)
            << isa_name(isa) << (causal ? " causal" : "");
        // Head h of the [1, s, heads * d] layout against the naive attention of that head alone.
        for (int64_t h : {int64_t(0), heads - 1}) {
          Tensor qh(DataType::Float, {1, s, d}), kh(DataType::Float, {1, s, d}), vh(DataType::Float, {1, s, d}),
              yh(DataType::Float, {1, s, d});
          for (int64_t i = 0; i < s; ++i)
            for (int64_t c = 0; c < d; ++c) {
              qh.data<float>()[i * d + c] = q.data<float>()[i * e + h * d + c];
              kh.data<float>()[i * d + c] = k.data<float>()[i * e + h * d + c];
              vh.data<float>()[i * d + c] = v.data<float>()[i * e + h * d + c];
              yh.data<float>()[i * d + c] = y[1][i * e + h * d + c];
            }
          EXPECT_TRUE(near(yh, naive_attention(qh, kh, vh, {}, 0.3f, causal), 2e-5))
              << isa_name(isa) << (causal ? " causal" : "") << " head " << h << " of " << heads;
        }
      }
  }
}

#if defined(__x86_64__)
// Masked keys (-10000, -inf) and scores far below their row's max give probabilities of exactly 0,
// never a subnormal: on Intel cores every instruction whose result is subnormal or underflows takes
// a microcode assist (~100 cycles): bert_like's attention at S = 128 took 4.5 ms instead of ~1.2. The
// calling thread's MXCSR records an underflow as a sticky flag; one thread runs the whole kernel.
TEST(AttentionBlocks, MaskedKeysNeverUnderflow) {
  const int64_t s = 70, d = 32;
  const Tensor q = rnd({1, s, d}, 31), k = rnd({1, s, d}, 32), v = rnd({1, s, d}, 33);
  for (float masked : {-10000.0f, kNinf, -300.0f}) {
    std::vector<float> mask(static_cast<size_t>(s));
    for (int64_t j = 0; j < s; ++j) mask[j] = j % 3 == 1 ? masked : 0.0f;
    for (Isa isa : isas()) {
      std::vector<float> y(static_cast<size_t>(s * d));
      Scratch scratch;
      fused::AttnProblem p;
      p.batch = 1, p.heads = 1, p.sq = s, p.sk = s, p.d = d, p.dv = d;
      p.q = {q.data<float>(), s * d, s * d, d};
      p.v = {v.data<float>(), s * d, s * d, d};
      p.k = k.data<float>(), p.k_batch = s * d, p.k_head = s * d, p.k_key = d, p.k_dim = 1;
      p.y = y.data(), p.y_batch = s * d, p.y_head = s * d, p.y_row = d;
      const int64_t base = 0;
      p.fmask = mask.data(), p.mask_base = &base, p.mask_row = 0, p.mask_col = 1;
      p.scale = 0.5f;
      ThreadPool pool(1);
      _mm_setcsr(_mm_getcsr() & ~static_cast<unsigned>(_MM_EXCEPT_UNDERFLOW | _MM_EXCEPT_DENORM));
      fused::flash_attention(p, pool, std::ref(scratch), isa);
      const unsigned flags = _mm_getcsr() & (_MM_EXCEPT_UNDERFLOW | _MM_EXCEPT_DENORM);
      EXPECT_EQ(flags, 0u) << isa_name(isa) << " mask " << masked;
      for (float x : y) ASSERT_TRUE(std::isfinite(x)) << isa_name(isa);
    }
  }
}
#endif

}  // namespace
}  // namespace fusor::test
