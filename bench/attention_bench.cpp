// Attention core benchmarks (not run in CI): the flash-attention core (kernels/fused/
// flash_attention.h) against the GEMM core doing the same two products per head, Q x K^T
// (S x S x d) and P x V (S x d x S), unpacked as for activations, on one thread.
//
//   /work/tools/quietrun build/bin/attention_bench --benchmark_min_time=0.2
//
// Arguments: head size d, sequence S (queries = keys), causal (0/1). 4 heads, batch 1, the
// operands in the projections' layout (S, 4 * d), as fusor.MultiHeadAttention reads them (the
// broad set's shapes below also in fusor.PackedAttention's layout, with a mask).
// GFLOPs counts 4 * S * S * d per head (half of it with causal: the masked blocks are skipped
// and not counted); the Gemm rows count the same 4 * S * S * d for the two products.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/fused/flash_attention.h"
#include "kernels/gemm/gemm.h"
#include "kernels/thread_pool.h"

namespace {

using namespace fusor;

constexpr int64_t kHeads = 4;

std::vector<float> rnd(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

void report(benchmark::State& st, double flops) {
  st.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Args: head size, sequence, causal, heads, threads, and optionally packed: 1 for the operands of
// fusor.PackedAttention after a fused QKV projection ((S, 3 * heads * d), Q, K and V side by side)
// with an additive padding mask (1, 1, 1, S) of zeros, as bert_like runs it.
void BM_Flash(benchmark::State& st) {
  const int64_t d = st.range(0), s = st.range(1);
  const bool causal = st.range(2) != 0;
  const int64_t heads = st.range(3);
  const int threads = static_cast<int>(st.range(4));
  const bool packed = st.range(5) != 0;
  const int64_t e = heads * d;
  auto q = rnd(s * e, 1), k = rnd(s * e, 2), v = rnd(s * e, 3), qkv = rnd(packed ? s * 3 * e : 0, 4);
  std::vector<float> y(s * e), mask(static_cast<size_t>(s), 0.0f);
  std::vector<int64_t> mask_base(static_cast<size_t>(heads), 0);
  // Each request of a call gets its own block (as KernelContext::scratch does): one shared block
  // put the threads' workspaces over the K^T copy they read (2 threads no faster than one).
  std::vector<std::vector<char>> scratch;
  size_t used = 0;
  ThreadPool pool(threads);
  fused::AttnProblem p;
  p.batch = 1, p.heads = heads, p.sq = s, p.sk = s, p.d = d, p.dv = d;
  p.q = {q.data(), s * e, d, e};
  p.v = {v.data(), s * e, d, e};
  p.k = k.data(), p.k_batch = s * e, p.k_head = d, p.k_key = e, p.k_dim = 1;
  p.y = y.data(), p.y_batch = s * e, p.y_head = d, p.y_row = e;
  if (packed) {
    p.q = {qkv.data(), s * 3 * e, d, 3 * e};
    p.k = qkv.data() + e, p.k_batch = s * 3 * e, p.k_key = 3 * e;
    p.v = {qkv.data() + 2 * e, s * 3 * e, d, 3 * e};
    p.fmask = mask.data(), p.mask_base = mask_base.data(), p.mask_row = 0, p.mask_col = 1;
  }
  p.scale = 0.125f;
  p.causal = causal;
  const Isa isa = active_isa();
  auto get = [&scratch, &used](size_t bytes) {
    if (used == scratch.size()) scratch.emplace_back();
    std::vector<char>& b = scratch[used++];
    if (b.size() < bytes + 64) b.resize(bytes + 64);
    return static_cast<void*>(reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(b.data()) + 63) & ~uintptr_t(63)));
  };
  for (auto _ : st) {
    used = 0;
    fused::flash_attention(p, pool, get, isa);
    benchmark::ClobberMemory();
  }
  report(st, 4.0 * s * s * d * static_cast<double>(heads) / (causal ? 2 : 1));
}

void BM_GemmSameProducts(benchmark::State& st) {
  const int64_t d = st.range(0), s = st.range(1);
  auto q = rnd(s * d, 1), k = rnd(s * d, 2), v = rnd(s * d, 3);
  std::vector<float> scores(s * s), y(s * d);
  for (auto _ : st) {
    for (int64_t h = 0; h < kHeads; ++h) {
      gemm(s, s, d, MatrixRef{q.data(), d}, MatrixRef{k.data(), d, true}, scores.data(), s);
      gemm(s, d, s, MatrixRef{scores.data(), s}, MatrixRef{v.data(), d}, y.data(), d);
    }
    benchmark::ClobberMemory();
  }
  report(st, 4.0 * s * s * d * kHeads);
}

void shapes(benchmark::internal::Benchmark* b, bool with_causal) {
  for (int64_t d : {32, 64, 128})
    for (int64_t s : {64, 128, 256, 512}) {
      b->Args({d, s, 0, kHeads, 1, 0});
      if (with_causal) b->Args({d, s, 1, kHeads, 1, 0});
    }
}

BENCHMARK(BM_Flash)->Apply([](benchmark::internal::Benchmark* b) { shapes(b, true); });
// The attention of the broad set's transformers (vit_tiny: 3 heads of 64 over 197 tokens; bert_like:
// 6 heads of 64 over 128 and 384, also packed with its mask as PackedAttention runs it; causal as
// gpt_like) at 1 and 2 threads.
BENCHMARK(BM_Flash)
    ->ArgNames({"d", "s", "causal", "heads", "threads", "packed"})
    ->Args({64, 197, 0, 3, 1, 0})
    ->Args({64, 197, 0, 3, 2, 0})
    ->Args({64, 128, 0, 6, 1, 0})
    ->Args({64, 128, 0, 6, 2, 0})
    ->Args({64, 384, 0, 6, 1, 0})
    ->Args({64, 384, 0, 6, 2, 0})
    ->Args({64, 128, 0, 6, 1, 1})
    ->Args({64, 128, 0, 6, 2, 1})
    ->Args({64, 384, 0, 6, 1, 1})
    ->Args({64, 384, 0, 6, 2, 1})
    ->Args({64, 128, 1, 6, 1, 0})
    ->Args({64, 128, 1, 6, 2, 0});
BENCHMARK(BM_GemmSameProducts)->Apply([](benchmark::internal::Benchmark* b) { shapes(b, false); });

}  // namespace

BENCHMARK_MAIN();
