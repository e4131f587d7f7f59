// This machine's single-core FMA peak at 512 and 256 bits, and its vpdpbusd (int8) peak (bench/fma_peak.h has the method;
// docs/providers.md the figures on this machine). Each run measures once; repetitions show the spread.
//
//   ./fma_peak_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include "bench/fma_peak.h"

namespace {

void BM_FmaPeak512(benchmark::State& st) {
  if (!fusor::cpu_features().avx512) return st.SkipWithError("no AVX-512 on this machine");
  for (auto _ : st) st.counters["GFLOPs"] = fusor::bench::fma_peak_avx512();
}
void BM_FmaPeak256(benchmark::State& st) {
  if (!fusor::cpu_features().avx2_fma) return st.SkipWithError("no AVX2/FMA on this machine");
  for (auto _ : st) st.counters["GFLOPs"] = fusor::bench::fma_peak_avx2();
}
void BM_VnniPeak512(benchmark::State& st) {
  if (!fusor::cpu_features().avx512_vnni) return st.SkipWithError("no AVX512-VNNI on this machine");
  for (auto _ : st) st.counters["GOPs"] = fusor::bench::vnni_peak_avx512();
}
void BM_VnniPeak256(benchmark::State& st) {
  if (!fusor::cpu_features().avx512_vnni) return st.SkipWithError("no AVX512-VNNI on this machine");
  for (auto _ : st) st.counters["GOPs"] = fusor::bench::vnni_peak_avx512_ymm();
}
BENCHMARK(BM_FmaPeak512)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FmaPeak256)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_VnniPeak512)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_VnniPeak256)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
