// int8 convolution benchmarks (kernels/int8/qconv.h) on the layer shapes of resnet18 and
// mobilenet_v2 that conv_bench.cpp times in float (batch 1, NHWC, uint8 activations, per-channel
// int8 weights, bias and Relu folded into the requantization; not run in CI).
//
//   ./qconv_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// QConv runs one thread, QConv_2T two; QConvNarrow is QConv with 7-bit weights ([-64, 64]: on AVX2
// without VNNI, the vpmaddubsw kernel of kernels/int8/qgemm_bytes_avx2.cpp), QConvRelu with inputs
// as after a Relu (bytes >= 128 rare: AVX2's split form), QConvClean with every input byte below
// 128 (AVX2: the byte kernel in place), QConvCentred with inputs around a zero point of 128 as
// after a linear bottleneck (AVX2's centred form); FUSOR_INT8_SPLIT=0 widens all of them (the
// comparison). QConvColdW and QConvColdW_2T cycle through copies of the
// weights (48 MB or more of them, past L2 and most of L3, as BM_FusorColdB in gemm_bench.cpp),
// so that each run reads its weights cold, as a model's layers do. GOPS counts 2 * MACs, so it compares with conv_bench's
// GFLOPs; the VNNI peak is what BM_VnniPeak measures (bench/fma_peak.h: 872 GOP/s per core on this
// Zen 5 at 512 bits, about 2 vpdpbusd a cycle; 439 at 256 bits).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "bench/conv_layer.h"
#include "bench/fma_peak.h"
#include "kernels/cpu_features.h"
#include "kernels/int8/qconv.h"
#include "kernels/thread_pool.h"

namespace {

using namespace fusor;

using Layer = bench::ConvLayer;

const Layer kLayers[] = {
    {"r18_conv1_7x7s2", 3, 224, 224, 64, 7, 2, 3, 1},
    {"r18_l1_3x3_64", 64, 56, 56, 64, 3, 1, 1, 1},
    {"r18_l2_3x3s2_128", 64, 56, 56, 128, 3, 2, 1, 1},
    {"r18_l2_3x3_128", 128, 28, 28, 128, 3, 1, 1, 1},
    {"r18_l2_down_1x1s2", 64, 56, 56, 128, 1, 2, 0, 1},
    {"r18_l3_3x3_256", 256, 14, 14, 256, 3, 1, 1, 1},
    {"r18_l4_3x3_512", 512, 7, 7, 512, 3, 1, 1, 1},
    {"mv2_conv1_3x3s2", 3, 224, 224, 32, 3, 2, 1, 1},
    {"mv2_expand_1x1_24_144", 24, 56, 56, 144, 1, 1, 0, 1},
    {"mv2_dw_3x3_144", 144, 56, 56, 144, 3, 1, 1, 144},
    {"mv2_dw_3x3s2_144", 144, 56, 56, 144, 3, 2, 1, 144},
    {"mv2_project_1x1_144_24", 144, 56, 56, 24, 1, 1, 0, 1},
    {"mv2_dw_3x3_960", 960, 7, 7, 960, 3, 1, 1, 960},
    {"mv2_1x1_320_1280", 320, 7, 7, 1280, 1, 1, 0, 1},
    {"mv2_expand_1x1_96_576_14", 96, 14, 14, 576, 1, 1, 0, 1},
    {"mv2_expand_1x1_160_960_7", 160, 7, 7, 960, 1, 1, 0, 1},
    {"mv2_project_1x1_576_96_14", 576, 14, 14, 96, 1, 1, 0, 1},
    {"mv2_project_1x1_960_160_7", 960, 7, 7, 160, 1, 1, 0, 1},
    {"mv2_expand_1x1_16_96_112", 16, 112, 112, 96, 1, 1, 0, 1},
    {"bert_ff1_as_1x1_128x384x1536", 384, 8, 16, 1536, 1, 1, 0, 1},  // bert_like_qdq's MatMuls as 1x1 convs
    {"bert_qkv_as_1x1_128x384x384", 384, 8, 16, 384, 1, 1, 0, 1},
};

// narrow: weights in [-64, 64] (quantize_static's reduce_range), which AVX2 without VNNI
// multiplies with vpmaddubsw (QPackedB::narrow); otherwise full-range [-127, 127].
// The input bytes: uniform over 0-255; as after a Relu with zero point 0 (1 in 100 at 128 or more);
// all below 128; around 128 (a spread of about 20, 1 in 2000 outside [64, 192]).
enum class Input { Uniform, ReluLike, Clean, Centred };
void run_layer(benchmark::State& st, int threads, bool cold, bool narrow = false, Input in = Input::Uniform) {
  const Layer& L = kLayers[st.range(0)];
  st.SetLabel(L.name);
  const Conv2dShape s = bench::conv_shape(L);
  const int64_t cg = L.c / L.group, taps = L.k * L.k;
  std::mt19937 g(1);
  std::vector<uint8_t> x(static_cast<size_t>(L.c * L.h * L.w)), y(static_cast<size_t>(L.oc * s.out_h * s.out_w));
  std::vector<int8_t> w(static_cast<size_t>(L.oc * cg * taps));
  std::vector<float> ws(static_cast<size_t>(L.oc));
  std::vector<int32_t> bias(static_cast<size_t>(L.oc));
  std::normal_distribution<float> around(128.0f, 20.0f);
  for (auto& v : x) {
    switch (in) {
      case Input::Uniform: v = static_cast<uint8_t>(g() % 256); break;
      case Input::ReluLike: v = static_cast<uint8_t>(g() % 100 != 0 ? g() % 128 : g() % 256); break;
      case Input::Clean: v = static_cast<uint8_t>(g() % 128); break;
      case Input::Centred: v = static_cast<uint8_t>(std::clamp(std::lround(around(g)), 0L, 255L)); break;
    }
  }
  for (auto& v : w) v = static_cast<int8_t>(narrow ? static_cast<int>(g() % 129) - 64 : static_cast<int>(g() % 255) - 127);
  for (auto& v : ws) v = 0.001f + 0.0001f * static_cast<float>(g() % 10);
  for (auto& v : bias) v = static_cast<int32_t>(g() % 2000) - 1000;
  int8::QConvSpec spec;
  spec.out_c = L.oc, spec.in_c_per_group = cg, spec.k_h = spec.k_w = L.k, spec.group = L.group;
  spec.x = {0.02f, in == Input::Centred ? 128 : 3};
  spec.y = {0.05f, 0};
  spec.act_lo = 0;
  spec.unit_stride = L.stride == 1;  // (the layers have no dilation): 3x3 ones may take Winograd
  std::vector<float> bias_scale(ws.size());
  for (size_t i = 0; i < ws.size(); ++i) bias_scale[i] = spec.x.scale * ws[i];
  const int64_t w_bytes = static_cast<int64_t>(w.size());
  const int64_t copies = cold ? std::max<int64_t>(2, (48 << 20) / w_bytes + 1) : 1;
  std::vector<int8::QConvWeights> qws;
  qws.reserve(static_cast<size_t>(copies));  // no moves: the epilogue points into its own arrays
  for (int64_t i = 0; i < copies; ++i)
    qws.emplace_back(spec, w.data(), true, ws.data(), L.oc, nullptr, 0, bias.data(), bias_scale.data(), L.oc,
                     active_int8_isa());
  size_t at = 0;
  ThreadPool pool(threads);
  std::vector<uint8_t> scratch;
  auto get = [&](size_t n) -> void* {
    if (scratch.size() < n + 64) scratch.resize(n + 64);
    return scratch.data();
  };
  for (auto _ : st) {
    qws[at].run(s, x.data(), nullptr, y.data(), threads > 1 ? &pool : nullptr, get);
    at = (at + 1) % qws.size();
    benchmark::ClobberMemory();
  }
  const double ops = 2.0 * L.oc * s.out_h * s.out_w * cg * taps;
  st.counters["GOPS"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_QConv(benchmark::State& st) { run_layer(st, 1, false); }
void BM_QConv_2T(benchmark::State& st) { run_layer(st, 2, false); }
void BM_QConvColdW(benchmark::State& st) { run_layer(st, 1, true); }
void BM_QConvColdW_2T(benchmark::State& st) { run_layer(st, 2, true); }
void BM_QConvNarrow(benchmark::State& st) { run_layer(st, 1, false, true); }
void BM_QConvRelu(benchmark::State& st) { run_layer(st, 1, false, false, Input::ReluLike); }
void BM_QConvClean(benchmark::State& st) { run_layer(st, 1, false, false, Input::Clean); }
void BM_QConvCentred(benchmark::State& st) { run_layer(st, 1, false, false, Input::Centred); }

// The machine's vpdpbusd peak on one core (bench/fma_peak.h: 24 chains in registers).
void BM_VnniPeak(benchmark::State& st) {
  if (!cpu_features().avx512_vnni) return st.SkipWithError("no AVX512-VNNI");
  for (auto _ : st) st.counters["GOPS"] = bench::vnni_peak_avx512();
}

void layers(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(sizeof(kLayers) / sizeof(kLayers[0])); ++i) b->Arg(i);
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_VnniPeak)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_QConv)->Apply(layers);
BENCHMARK(BM_QConv_2T)->Apply(layers)->UseRealTime();
BENCHMARK(BM_QConvColdW)->Apply(layers);
BENCHMARK(BM_QConvColdW_2T)->Apply(layers)->UseRealTime();
BENCHMARK(BM_QConvNarrow)->Apply(layers);
BENCHMARK(BM_QConvRelu)->Apply(layers);
BENCHMARK(BM_QConvClean)->Apply(layers);
BENCHMARK(BM_QConvCentred)->Apply(layers);

}  // namespace

BENCHMARK_MAIN();
