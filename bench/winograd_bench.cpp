// Winograd against the direct convolution on resnet18/34's 3x3 stride-1 layer shapes (batch 1,
// bias + Relu fused), plus a channel sweep for the break-even the rule uses. Not run in CI.
//
//   ./winograd_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// Direct: the conv core (kernels/conv/conv.h), NCHW and NHWC, and the cpu provider's blocked
// direct conv (kernels/nchwc, what level all runs without Winograd). Winograd: kernels/winograd
// with F(2,3) and F(4,3), NCHW and blocked (block 16, the NCHWc rule's form). Counters: GFLOPs = the direct convolution's 2*K*C*9*OH*OW per second (the
// "effective" rate for Winograd), xPeak = that over this machine's FMA peak per core (measured once
// at start, bench/fma_peak.h), per thread used.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "bench/fma_peak.h"
#include "kernels/conv/conv.h"
#include "kernels/nchwc/conv.h"
#include "kernels/nchwc/nchwc_format.h"
#include "kernels/thread_pool.h"
#include "kernels/winograd/winograd.h"

namespace {

using namespace fusor;


struct Layer {
  const char* name;
  int64_t c, hw, k;
};

const Layer kLayers[] = {
    {"r18_l1_64x56", 64, 56, 64},    {"r18_l2_128x28", 128, 28, 128}, {"r18_l3_256x14", 256, 14, 256},
    {"r18_l4_512x7", 512, 7, 512},   {"sweep_16x56", 16, 56, 16},     {"sweep_32x56", 32, 56, 32},
    {"sweep_48x56", 48, 56, 48},     {"sweep_32x28", 32, 28, 32},     {"sweep_64x28", 64, 28, 64},
    {"sweep_64x14", 64, 14, 64},     {"sweep_128x14", 128, 14, 128},  {"sweep_256x7", 256, 7, 256},
    {"sweep_128x7", 128, 7, 128},    {"sweep_3x112_to_32", 3, 112, 32},
    // densenet121's growth convs (128 -> 32) and squeezenet1_1's expand3x3 convs.
    {"dense_128x56_to_32", 128, 56, 32}, {"dense_128x28_to_32", 128, 28, 32}, {"dense_128x14_to_32", 128, 14, 32},
    {"dense_128x7_to_32", 128, 7, 32},   {"squeeze_16x55_to_64", 16, 55, 64}, {"squeeze_32x27_to_128", 32, 27, 128},
    {"squeeze_48x13_to_192", 48, 13, 192}, {"squeeze_64x13_to_256", 64, 13, 256},
};
constexpr int kNumLayers = static_cast<int>(sizeof(kLayers) / sizeof(kLayers[0]));

std::vector<float> rnd(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

void counters(benchmark::State& st, const Layer& L, int threads) {
  const double flops = 2.0 * L.k * L.c * 9 * L.hw * L.hw;
  st.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["xPeak"] =
      benchmark::Counter(flops * 1e-9 / (std::max(1.0, bench::fma_peak_gflops()) * threads), benchmark::Counter::kIsIterationInvariantRate);
}

void direct(benchmark::State& st, ConvLayout layout, int threads) {
  const Layer& L = kLayers[st.range(0)];
  st.SetLabel(L.name);
  Conv2dShape s;
  s.in_c = L.c, s.in_h = s.in_w = L.hw, s.out_c = L.k, s.k_h = s.k_w = 3;
  s.pad_t = s.pad_l = s.pad_b = s.pad_r = 1;
  s.out_h = s.out_w = L.hw;
  const auto x = rnd(L.c * L.hw * L.hw, 1), w = rnd(L.k * L.c * 9, 2), bias = rnd(L.k, 3);
  std::vector<float> y(L.k * L.hw * L.hw);
  PackedConvWeights pw(w.data(), L.k, L.c, 3, 3, 1, layout);
  Epilogue ep;
  ep.bias = bias.data();
  ep.act = ActivationSpec::relu();
  ThreadPool pool(threads);
  GemmRun run;
  if (threads > 1) run.pool = &pool;
  for (auto _ : st) {
    conv2d(pw, s, x.data(), y.data(), ep, run);
    benchmark::ClobberMemory();
  }
  counters(st, L, threads);
}

// fusor.NchwcConv's kernel: blocked X and Y (block 16), weights packed once.
void nchwc_direct(benchmark::State& st, int threads) {
  const Layer& L = kLayers[st.range(0)];
  st.SetLabel(L.name);
  Conv2dShape s;
  s.in_c = L.c, s.in_h = s.in_w = L.hw, s.out_c = L.k, s.k_h = s.k_w = 3;
  s.pad_t = s.pad_l = s.pad_b = s.pad_r = 1;
  s.out_h = s.out_w = L.hw;
  const bool plain = L.c < 8;
  const int64_t xin = plain ? L.c * L.hw * L.hw : nchwc_blocks(L.c, 16) * 16 * L.hw * L.hw;
  const auto x = rnd(xin, 1), w = rnd(L.k * L.c * 9, 2), bias = rnd(L.k, 3);
  std::vector<float> y(nchwc_blocks(L.k, 16) * 16 * L.hw * L.hw);
  NchwcConvWeights pw(w.data(), L.k, L.c, 3, 3, 1, plain, 16);
  Epilogue ep;
  ep.bias = bias.data();
  ep.act = ActivationSpec::relu();
  ThreadPool pool(threads);
  GemmRun run;
  if (threads > 1) run.pool = &pool;
  for (auto _ : st) {
    nchwc_conv(pw, s, x.data(), y.data(), ep, run);
    benchmark::ClobberMemory();
  }
  counters(st, L, threads);
}

void winograd(benchmark::State& st, int m, int threads, int64_t block = 0) {
  const Layer& L = kLayers[st.range(0)];
  st.SetLabel(L.name);
  if (block && L.c < 8) {
    st.SkipWithError("the blocked layout is not used below 8 input channels");
    return;
  }
  WinogradShape s;
  s.in_c = L.c, s.in_h = s.in_w = L.hw, s.out_c = L.k, s.out_h = s.out_w = L.hw, s.pad_t = s.pad_l = 1;
  s.block = block;
  const int64_t cx = block ? nchwc_blocks(L.c, 16) * 16 : L.c, cy = block ? nchwc_blocks(L.k, 16) * 16 : L.k;
  const auto x = rnd(cx * L.hw * L.hw, 1), w = rnd(L.k * L.c * 9, 2), bias = rnd(L.k, 3);
  std::vector<float> y(cy * L.hw * L.hw);
  const auto u = winograd_transform_filter(w.data(), L.k, L.c, m);
  WinogradWeights pw(u.data(), m, L.c, L.k);
  Epilogue ep;
  ep.bias = bias.data();
  ep.bias_axis = BiasAxis::PerRow;
  ep.act = ActivationSpec::relu();
  ThreadPool pool(threads);
  GemmRun run;
  if (threads > 1) run.pool = &pool;
  for (auto _ : st) {
    winograd_conv2d(pw, s, x.data(), y.data(), ep, run);
    benchmark::ClobberMemory();
  }
  counters(st, L, threads);
}

void BM_DirectNCHW(benchmark::State& st) { direct(st, ConvLayout::NCHW, 1); }
void BM_DirectNHWC(benchmark::State& st) { direct(st, ConvLayout::NHWC, 1); }
void BM_WinogradF2(benchmark::State& st) { winograd(st, 2, 1); }
void BM_WinogradF4(benchmark::State& st) { winograd(st, 4, 1); }
void BM_DirectNCHW_2T(benchmark::State& st) { direct(st, ConvLayout::NCHW, 2); }
void BM_WinogradF4_2T(benchmark::State& st) { winograd(st, 4, 2); }
void BM_DirectNchwc(benchmark::State& st) { nchwc_direct(st, 1); }
void BM_WinogradF4Nchwc(benchmark::State& st) { winograd(st, 4, 1, 16); }
void BM_WinogradF2Nchwc(benchmark::State& st) { winograd(st, 2, 1, 16); }
void BM_DirectNchwc_2T(benchmark::State& st) { nchwc_direct(st, 2); }
void BM_WinogradF4Nchwc_2T(benchmark::State& st) { winograd(st, 4, 2, 16); }

void layers(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < kNumLayers; ++i) b->Arg(i);
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_DirectNCHW)->Apply(layers);
BENCHMARK(BM_DirectNHWC)->Apply(layers);
BENCHMARK(BM_WinogradF2)->Apply(layers);
BENCHMARK(BM_WinogradF4)->Apply(layers);
BENCHMARK(BM_DirectNCHW_2T)->Apply(layers)->UseRealTime();
BENCHMARK(BM_WinogradF4_2T)->Apply(layers)->UseRealTime();
BENCHMARK(BM_DirectNchwc)->Apply(layers);
BENCHMARK(BM_WinogradF4Nchwc)->Apply(layers);
BENCHMARK(BM_WinogradF2Nchwc)->Apply(layers);
BENCHMARK(BM_DirectNchwc_2T)->Apply(layers)->UseRealTime();
BENCHMARK(BM_WinogradF4Nchwc_2T)->Apply(layers)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
