// Convolution benchmarks on layer shapes of resnet18 and mobilenet_v2 (batch 1, not run in CI).
//
//   ./conv_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Each layer runs with its bias + Relu (Clip 0..6 for mobilenet) fused, NCHW and NHWC, one thread
// (ConvNCHW / ConvNHWC) and two (ConvNCHW_2T). GFLOPs counts 2 * MACs of the convolution.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "bench/conv_layer.h"
#include "kernels/conv/conv.h"
#include "kernels/thread_pool.h"

namespace {

using namespace fusor;

using Layer = bench::ConvLayer;

const Layer kLayers[] = {
    {"r18_conv1_7x7s2", 3, 224, 224, 64, 7, 2, 3, 1, false},
    {"r18_l1_3x3_64", 64, 56, 56, 64, 3, 1, 1, 1, false},
    {"r18_l2_3x3s2_128", 64, 56, 56, 128, 3, 2, 1, 1, false},
    {"r18_l2_3x3_128", 128, 28, 28, 128, 3, 1, 1, 1, false},
    {"r18_l2_down_1x1s2", 64, 56, 56, 128, 1, 2, 0, 1, false},
    {"r18_l3_3x3_256", 256, 14, 14, 256, 3, 1, 1, 1, false},
    {"r18_l4_3x3_512", 512, 7, 7, 512, 3, 1, 1, 1, false},
    {"mv2_conv1_3x3s2", 3, 224, 224, 32, 3, 2, 1, 1, true},
    {"mv2_expand_1x1_24_144", 24, 56, 56, 144, 1, 1, 0, 1, true},
    {"mv2_dw_3x3_144", 144, 56, 56, 144, 3, 1, 1, 144, true},
    {"mv2_dw_3x3s2_144", 144, 56, 56, 144, 3, 2, 1, 144, true},
    {"mv2_project_1x1_144_24", 144, 56, 56, 24, 1, 1, 0, 1, false},
    {"mv2_dw_3x3_960", 960, 7, 7, 960, 3, 1, 1, 960, true},
    {"mv2_1x1_320_1280", 320, 7, 7, 1280, 1, 1, 0, 1, true},
};

std::vector<float> rnd(size_t n) {
  std::mt19937 g(1);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

void run_layer(benchmark::State& st, ConvLayout layout, int threads) {
  const Layer& L = kLayers[st.range(0)];
  st.SetLabel(L.name);
  const Conv2dShape s = bench::conv_shape(L);
  const auto x = rnd(L.c * L.h * L.w), w = rnd(L.oc * (L.c / L.group) * L.k * L.k), bias = rnd(L.oc);
  std::vector<float> y(L.oc * s.out_h * s.out_w);
  PackedConvWeights pw(w.data(), L.oc, L.c / L.group, L.k, L.k, L.group, layout);
  Epilogue ep;
  ep.bias = bias.data();
  ep.act = L.relu6 ? ActivationSpec::clip(0, 6) : ActivationSpec::relu();
  ThreadPool pool(threads);
  GemmRun run;
  if (threads > 1) run.pool = &pool;
  for (auto _ : st) {
    conv2d(pw, s, x.data(), y.data(), ep, run);
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * L.oc * s.out_h * s.out_w * (L.c / L.group) * L.k * L.k;
  st.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ConvNCHW(benchmark::State& st) { run_layer(st, ConvLayout::NCHW, 1); }
void BM_ConvNHWC(benchmark::State& st) { run_layer(st, ConvLayout::NHWC, 1); }
void BM_ConvNCHW_2T(benchmark::State& st) { run_layer(st, ConvLayout::NCHW, 2); }

void layers(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(sizeof(kLayers) / sizeof(kLayers[0])); ++i) b->Arg(i);
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_ConvNCHW)->Apply(layers);
BENCHMARK(BM_ConvNHWC)->Apply(layers);
BENCHMARK(BM_ConvNCHW_2T)->Apply(layers)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
