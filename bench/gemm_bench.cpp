// GEMM core benchmarks (not run in CI).
//
//   OMP_NUM_THREADS=1 ./gemm_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// - Peak: the machine's measured single-core fp32 FMA rate (independent FMAs, no memory), so the
//   GEMM figures read as a fraction of it ("frac_peak").
// - Fusor/M/N/K vs Dnnl/M/N/K: C = A * B, single-threaded, B pre-packed for fusor (as a weight),
//   oneDNN's dnnl_sgemm when the library was found (OMP_NUM_THREADS=1 keeps it on one core).
//   FusorUnpacked: B packed inside the call (MatMul of two activations).
// - Epilogue: bias + GELU fused in the GEMM against the same GEMM followed by a separate pass.
// FUSOR_ISA, FUSOR_GEMM_TILE and FUSOR_GEMM_BLOCK=mc,nc,kc select paths for tuning.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/fma_peak.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm/gemm.h"
#include "kernels/thread_pool.h"

#ifdef FUSOR_HAVE_DNNL
#include <dnnl.h>
#endif

namespace {

using namespace fusor;

std::vector<float> rnd(size_t n) {
  std::mt19937 g(42);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

double peak_gflops() { return fusor::bench::fma_peak_gflops(); }

void BM_Peak(benchmark::State& st) {
  for (auto _ : st) st.counters["GFLOPs"] = peak_gflops();
}
BENCHMARK(BM_Peak)->Iterations(1);

void report(benchmark::State& st, int64_t M, int64_t N, int64_t K) {
  const double flops = 2.0 * M * N * K;
  st.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (peak_gflops() > 0)
    st.counters["frac_peak"] =
        benchmark::Counter(flops * 1e-9 / peak_gflops(), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Fusor(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  auto A = rnd(M * K), B = rnd(K * N);
  std::vector<float> C(M * N);
  PackedB pb(MatrixRef{B.data(), N}, K, N);
  for (auto _ : st) {
    gemm(M, MatrixRef{A.data(), K}, pb, C.data(), N);
    benchmark::ClobberMemory();
  }
  report(st, M, N, K);
}

void BM_FusorUnpacked(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  auto A = rnd(M * K), B = rnd(K * N);
  std::vector<float> C(M * N);
  for (auto _ : st) {
    gemm(M, N, K, MatrixRef{A.data(), K}, MatrixRef{B.data(), N}, C.data(), N);
    benchmark::ClobberMemory();
  }
  report(st, M, N, K);
}

void BM_Fusor2Threads(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  auto A = rnd(M * K), B = rnd(K * N);
  std::vector<float> C(M * N);
  PackedB pb(MatrixRef{B.data(), N}, K, N);
  ThreadPool pool(2);
  GemmRun run;
  run.pool = &pool;
  for (auto _ : st) {
    gemm(M, MatrixRef{A.data(), K}, pb, C.data(), N, {}, run);
    benchmark::ClobberMemory();
  }
  report(st, M, N, K);
}

// As Fusor, but each call uses the next of enough distinct B matrices (> 48 MiB in all) that B
// comes from memory, not from L2 or L3: a model's weights between two uses of one layer.
void BM_FusorColdB(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  auto A = rnd(M * K), B = rnd(K * N);
  std::vector<float> C(M * N);
  const int64_t copies = std::max<int64_t>(2, (48 << 20) / (K * N * 4) + 1);
  std::vector<PackedB> pbs;
  for (int64_t i = 0; i < copies; ++i) pbs.emplace_back(MatrixRef{B.data(), N}, K, N);
  size_t i = 0;
  for (auto _ : st) {
    gemm(M, MatrixRef{A.data(), K}, pbs[i], C.data(), N);
    i = (i + 1) % pbs.size();
    benchmark::ClobberMemory();
  }
  report(st, M, N, K);
}

#ifdef FUSOR_HAVE_DNNL
void BM_Dnnl(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  auto A = rnd(M * K), B = rnd(K * N);
  std::vector<float> C(M * N);
  for (auto _ : st) {
    dnnl_sgemm('N', 'N', M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C.data(), N);
    benchmark::ClobberMemory();
  }
  report(st, M, N, K);
}
#endif

void transformer_s128_shapes(benchmark::internal::Benchmark* b) {
  b->Args({128, 1152, 384});
  b->Args({128, 384, 384});
  b->Args({128, 1536, 384});
  b->Args({128, 384, 1536});
  b->Args({197, 576, 192});
  b->Args({197, 768, 192});
  b->Args({197, 192, 768});
}

// convnext_tiny's pointwise MLPs (channels-last 1x1s: M = pixels, 4x expansion) at 56x56, 28x28
// (the projection) and 7x7.
void convnext_shapes(benchmark::internal::Benchmark* b) {
  b->Args({3136, 384, 96});
  b->Args({3136, 96, 384});
  b->Args({784, 192, 768});
  b->Args({49, 3072, 768});
  b->Args({49, 768, 3072});
}

// (M, N, K): square, then M = 1..64 shapes of real models (classifier heads, transformer FFN
// slices, im2col'ed convolutions: resnet18 layer4 3x3 is M=512 N=49 K=4608; mobilenet's 1x1
// expansions are M=OC, N=HW, K=IC).
void shapes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 1024, 1024});
  b->Args({1, 1000, 512});
  b->Args({1, 1000, 2048});
  b->Args({4, 1000, 512});
  b->Args({16, 768, 768});
  b->Args({32, 3072, 768});
  b->Args({64, 2304, 256});
  b->Args({64, 256, 2304});
  b->Args({64, 196, 576});
  b->Args({196, 576, 64});
  b->Args({512, 49, 4608});
  b->Args({64, 3136, 64});
  b->Args({96, 12544, 16});
  // bert_like at S=384 (hidden 384, FFN 1536): the fused QKV projection, FFN up and down.
  b->Args({384, 1152, 384});
  b->Args({384, 1536, 384});
  b->Args({384, 384, 1536});
  // bert_like at S=128 and vit_tiny (197 tokens, hidden 192, MLP 768): the shapes of the broad set.
  transformer_s128_shapes(b);
  convnext_shapes(b);
  // gpt_like at S=128 (hidden 256, MLP 1024, vocabulary 8000): QKV, output projection, MLP, head.
  b->Args({128, 768, 256});
  b->Args({128, 256, 256});
  b->Args({128, 1024, 256});
  b->Args({128, 256, 1024});
  b->Args({128, 8000, 256});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Fusor)->Apply(shapes);
BENCHMARK(BM_FusorColdB)->Apply(transformer_s128_shapes)->Unit(benchmark::kMicrosecond);
#ifdef FUSOR_HAVE_DNNL
BENCHMARK(BM_Dnnl)->Apply(shapes);
#endif
BENCHMARK(BM_FusorUnpacked)->Args({1024, 1024, 1024})->Args({64, 196, 576})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Fusor2Threads)
    ->Args({1024, 1024, 1024})
    ->Args({64, 3136, 64})
    ->Args({384, 1152, 384})
    ->Args({384, 1536, 384})
    ->Args({384, 384, 1536})
    ->Args({384, 384, 384})
    ->Apply(transformer_s128_shapes)
    ->Apply(convnext_shapes)
    ->Unit(benchmark::kMicrosecond);

// Fused bias + activation epilogue vs the same GEMM and a separate pass over C.
void epilogue_case(benchmark::State& st, bool fused) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  auto A = rnd(M * K), B = rnd(K * N), bias = rnd(N);
  std::vector<float> C(M * N);
  PackedB pb(MatrixRef{B.data(), N}, K, N);
  Epilogue ep;
  ep.bias = bias.data();
  ep.bias_axis = BiasAxis::PerColumn;
  ep.act = ActivationSpec::of(st.range(3) ? Activation::Gelu : Activation::Relu);
  for (auto _ : st) {
    if (fused) {
      gemm(M, MatrixRef{A.data(), K}, pb, C.data(), N, ep);
    } else {
      gemm(M, MatrixRef{A.data(), K}, pb, C.data(), N);
      apply_epilogue(C.data(), N, M, N, ep);
    }
    benchmark::ClobberMemory();
  }
  report(st, M, N, K);
}
void BM_EpilogueFused(benchmark::State& st) { epilogue_case(st, true); }
void BM_EpilogueSeparate(benchmark::State& st) { epilogue_case(st, false); }
// act 0 = Relu, 1 = GELU; shapes: a 1x1 conv (big C, small K), a transformer FFN, convnext_tiny's
// first MLP expansion.
#define EPILOGUE_SHAPES ->Args({3136, 64, 64, 0})->Args({3136, 64, 64, 1})->Args({128, 3072, 768, 1})->Args({3136, 384, 96, 1})->Unit(benchmark::kMicrosecond)
// The activation pass alone (in place over a rows x cols C in L2): what a GELU costs beside its
// GEMM (bert's FFN up-projection output, 128 x 1536). act as above.
void BM_ActivationPass(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1);
  const auto src = rnd(M * N);
  auto C = src;
  Epilogue ep;
  const Activation kinds[] = {Activation::Relu, Activation::Gelu, Activation::SiLU};
  ep.act = ActivationSpec::of(kinds[st.range(2)]);
  for (auto _ : st) {
    // Fresh values each time: applied in place again and again, GELU takes them to subnormals,
    // whose arithmetic Intel cores run in microcode (~100 cycles an instruction).
    st.PauseTiming();
    C = src;
    st.ResumeTiming();
    apply_epilogue(C.data(), N, M, N, ep);
    benchmark::ClobberMemory();
  }
  st.counters["ns_per_value"] = benchmark::Counter(static_cast<double>(M * N) * 1e-9,
                                                   benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
// Third argument: 0 Relu, 1 Gelu (erf), 2 SiLU.
BENCHMARK(BM_ActivationPass)->Args({128, 1536, 1})->Args({197, 768, 1})->Args({128, 1536, 0})->Args({128, 1536, 2})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EpilogueFused) EPILOGUE_SHAPES;
BENCHMARK(BM_EpilogueSeparate) EPILOGUE_SHAPES;

}  // namespace

BENCHMARK_MAIN();
