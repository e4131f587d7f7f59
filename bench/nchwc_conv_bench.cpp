// The blocked (NCHWc) convolution per layer shape of resnet-like and mobile CNNs, batch 1, with
// its fused bias + Relu (Clip 0..6 for the mobile layers), 1 and 2 threads, and with SiLU or
// HardSwish instead (1 thread). Not run in CI.
//
//   ./nchwc_conv_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// GFLOPs counts 2 x MACs of the convolution (padding taps not counted); frac_peak is the 1-thread
// fraction of this machine's single-core FMA peak (bench/fma_peak.h, measured at start). NchwcConv_NCHW runs the same layers on the NCHW conv core (kernels/conv) for
// comparison.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "bench/conv_layer.h"
#include "bench/fma_peak.h"
#include "kernels/conv/conv.h"
#include "kernels/nchwc/conv.h"
#include "kernels/nchwc/nchwc_format.h"
#include "kernels/thread_pool.h"

namespace {

using namespace fusor;

using Layer = bench::ConvLayer;

const Layer kLayers[] = {
    {"r18_stem_7x7s2_c3", 3, 224, 224, 64, 7, 2, 3, 1, false},
    {"r18_l1_3x3_64", 64, 56, 56, 64, 3, 1, 1, 1, false},
    {"r18_l2_3x3s2_64_128", 64, 56, 56, 128, 3, 2, 1, 1, false},
    {"r18_l2_3x3_128", 128, 28, 28, 128, 3, 1, 1, 1, false},
    {"r18_l2_down_1x1s2", 64, 56, 56, 128, 1, 2, 0, 1, false},
    {"r18_l3_3x3_256", 256, 14, 14, 256, 3, 1, 1, 1, false},
    {"r18_l4_3x3s2_256_512", 256, 14, 14, 512, 3, 2, 1, 1, false},
    {"r18_l4_3x3_512", 512, 7, 7, 512, 3, 1, 1, 1, false},
    {"r50_1x1_64_256_56", 64, 56, 56, 256, 1, 1, 0, 1, false},
    {"r50_1x1_256_64_56", 256, 56, 56, 64, 1, 1, 0, 1, false},
    {"r50_1x1_2048_512_7", 2048, 7, 7, 512, 1, 1, 0, 1, false},
    {"r50_1x1_512_2048_7", 512, 7, 7, 2048, 1, 1, 0, 1, false},
    {"mv2_stem_3x3s2_c3", 3, 224, 224, 32, 3, 2, 1, 1, true},
    {"mv2_expand_1x1_24_144", 24, 56, 56, 144, 1, 1, 0, 1, true},
    {"mv2_dw_3x3_144", 144, 56, 56, 144, 3, 1, 1, 144, true},
    {"mv2_dw_3x3s2_144", 144, 56, 56, 144, 3, 2, 1, 144, true},
    {"mv2_project_1x1_144_24", 144, 56, 56, 24, 1, 1, 0, 1, false},
    {"mv2_dw_3x3_960", 960, 7, 7, 960, 3, 1, 1, 960, true},
    {"mv2_1x1_320_1280_7", 320, 7, 7, 1280, 1, 1, 0, 1, true},
    {"mv2_expand_1x1_96_576_14", 96, 14, 14, 576, 1, 1, 0, 1, true},
    {"mv2_dw_3x3_576_14", 576, 14, 14, 576, 3, 1, 1, 576, true},
    {"mv2_project_1x1_384_64_14", 384, 14, 14, 64, 1, 1, 0, 1, false},
    {"mv2_dw_3x3s2_192_28", 192, 28, 28, 192, 3, 2, 1, 192, true},
    {"mv2_dw_3x3_384_14", 384, 14, 14, 384, 3, 1, 1, 384, true},
    {"effb0_dw_5x5_240_28", 240, 28, 28, 240, 5, 1, 2, 240, true},
    {"mv2_dw_3x3s2_96_112", 96, 112, 112, 96, 3, 2, 1, 96, true},
    {"mv2_project_1x1_32_16_112", 32, 112, 112, 16, 1, 1, 0, 1, false},
    {"mv3_expand_1x1_16_64_112", 16, 112, 112, 64, 1, 1, 0, 1, true},
    {"mv3_project_1x1_16_16_112", 16, 112, 112, 16, 1, 1, 0, 1, false},
    {"regnet_g8_3x3_104_28", 104, 28, 28, 104, 3, 1, 1, 13, false},
    {"regnet_g8_3x3s2_48_112", 48, 112, 112, 48, 3, 2, 1, 6, false},
    {"regnet_g8_3x3_48_56", 48, 56, 56, 48, 3, 1, 1, 6, false},
    {"regnet_g8_3x3_208_14", 208, 14, 14, 208, 3, 1, 1, 26, false},
    {"regnet_g8_3x3_440_7", 440, 7, 7, 440, 3, 1, 1, 55, false},
    {"effb0_expand_1x1_16_96_112", 16, 112, 112, 96, 1, 1, 0, 1, true},
    {"effb0_dw_3x3_32_112", 32, 112, 112, 32, 3, 1, 1, 32, true},
    {"effb0_expand_1x1_40_240_28", 40, 28, 28, 240, 1, 1, 0, 1, true},
    {"effb0_expand_1x1_112_672_14", 112, 14, 14, 672, 1, 1, 0, 1, true},
    {"effb0_dw_5x5_672_14", 672, 14, 14, 672, 5, 1, 2, 672, true},
    {"mv2_project_1x1_960_320_7", 960, 7, 7, 320, 1, 1, 0, 1, false},
    {"mv2_project_1x1_576_96_14", 576, 14, 14, 96, 1, 1, 0, 1, false},
    {"mv2_expand_1x1_24_144_56", 24, 56, 56, 144, 1, 1, 0, 1, true},
    {"mv2_project_1x1_96_24_56", 96, 56, 56, 24, 1, 1, 0, 1, false},
    {"mv3_dw_3x3s2_64_112", 64, 112, 112, 64, 3, 2, 1, 64, true},
};

std::vector<float> rnd(size_t n) {
  std::mt19937 g(1);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

void counters(benchmark::State& st, const Layer& L, const Conv2dShape& s, int threads) {
  const double flops = 2.0 * L.oc * s.out_h * s.out_w * (L.c / L.group) * L.k * L.k;
  st.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (threads == 1 && bench::fma_peak_gflops() > 0)
    st.counters["frac_peak"] =
        benchmark::Counter(flops * 1e-9 / bench::fma_peak_gflops(), benchmark::Counter::kIsIterationInvariantRate);
}

void run_nchwc(benchmark::State& st, int threads, Activation act = Activation::None) {
  const Layer& L = kLayers[st.range(0)];
  st.SetLabel(L.name);
  const Conv2dShape s = bench::conv_shape(L);
  const bool plain = L.c < 8;
  const int64_t B = kNchwcBlock;
  const auto x = rnd(plain ? L.c * L.h * L.w : nchwc_blocks(L.c, B) * B * L.h * L.w);
  const auto w = rnd(L.oc * (L.c / L.group) * L.k * L.k), bias = rnd(L.oc);
  std::vector<float> y(nchwc_blocks(L.oc, B) * B * s.out_h * s.out_w);
  NchwcConvWeights pw(w.data(), L.oc, L.c / L.group, L.k, L.k, L.group, plain, B);
  Epilogue ep;
  ep.bias = bias.data();
  ep.act = act != Activation::None ? ActivationSpec::of(act) : L.relu6 ? ActivationSpec::clip(0, 6) : ActivationSpec::relu();
  ThreadPool pool(threads);
  GemmRun run;
  if (threads > 1) run.pool = &pool;
  for (auto _ : st) {
    nchwc_conv(pw, s, x.data(), y.data(), ep, run);
    benchmark::ClobberMemory();
  }
  counters(st, L, s, threads);
}

void BM_NchwcConv(benchmark::State& st) { run_nchwc(st, 1); }
void BM_NchwcConv_2T(benchmark::State& st) { run_nchwc(st, 2); }
// The same with SiLU (efficientnet's activation: not a clamp, applied after the tiles) and HardSwish
// (mobilenet_v3's).
void BM_NchwcConv_SiLU(benchmark::State& st) { run_nchwc(st, 1, Activation::SiLU); }
void BM_NchwcConv_HardSwish(benchmark::State& st) { run_nchwc(st, 1, Activation::HardSwish); }

void BM_NchwcConv_NCHW(benchmark::State& st) {
  const Layer& L = kLayers[st.range(0)];
  st.SetLabel(L.name);
  const Conv2dShape s = bench::conv_shape(L);
  const auto x = rnd(L.c * L.h * L.w), w = rnd(L.oc * (L.c / L.group) * L.k * L.k), bias = rnd(L.oc);
  std::vector<float> y(L.oc * s.out_h * s.out_w);
  PackedConvWeights pw(w.data(), L.oc, L.c / L.group, L.k, L.k, L.group, ConvLayout::NCHW);
  Epilogue ep;
  ep.bias = bias.data();
  ep.act = L.relu6 ? ActivationSpec::clip(0, 6) : ActivationSpec::relu();
  for (auto _ : st) {
    conv2d(pw, s, x.data(), y.data(), ep, {});
    benchmark::ClobberMemory();
  }
  counters(st, L, s, 1);
}

void layers(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(sizeof(kLayers) / sizeof(kLayers[0])); ++i) b->Arg(i);
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_NchwcConv)->Apply(layers);
BENCHMARK(BM_NchwcConv_2T)->Apply(layers)->UseRealTime();
BENCHMARK(BM_NchwcConv_SiLU)->Apply(layers);
BENCHMARK(BM_NchwcConv_HardSwish)->Apply(layers);
BENCHMARK(BM_NchwcConv_NCHW)->Apply(layers);

}  // namespace

BENCHMARK_MAIN();
