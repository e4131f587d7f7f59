// This machine's single-core fp32 FMA peak, the yardstick the GEMM and convolution benchmarks
// report against ("frac_peak"). The method: 24 independent accumulator
// chains of fused multiply-adds with no memory operand, so neither the FMA latency (4 cycles on
// Zen 4/5 and Intel cores since Skylake) nor a load limits the issue rate; timed in thread CPU
// time (the machine is shared); peak = chains x lanes x 2 flops x iterations / seconds. A core
// that splits 512-bit FMAs in two (Zen 4) gives about the same figure at 512 and 256 bits; one
// with full-width AVX-512 units (Zen 5, Intel server cores) about twice.
#pragma once
#include <immintrin.h>
#include <time.h>

#include <cstdint>

#include "kernels/cpu_features.h"

namespace fusor::bench {

inline double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

constexpr int kPeakChains = 24;
constexpr int64_t kPeakIters = 20'000'000;

__attribute__((target("avx512f,fma"), noinline)) inline double fma_peak_avx512() {
  __m512 acc[kPeakChains];
  for (int i = 0; i < kPeakChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  const double t0 = thread_seconds();
  for (int64_t it = 0; it < kPeakIters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kPeakChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  const double s = thread_seconds() - t0;
  alignas(64) float sink[16];
  for (int i = 1; i < kPeakChains; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  _mm512_store_ps(sink, acc[0]);
  volatile float keep = sink[0];
  (void)keep;
  return 2.0 * 16 * kPeakChains * kPeakIters / s * 1e-9;
}

__attribute__((target("avx2,fma"), noinline)) inline double fma_peak_avx2() {
  __m256 acc[kPeakChains];
  for (int i = 0; i < kPeakChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  const double t0 = thread_seconds();
  for (int64_t it = 0; it < kPeakIters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kPeakChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  const double s = thread_seconds() - t0;
  alignas(32) float sink[8];
  for (int i = 1; i < kPeakChains; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  _mm256_store_ps(sink, acc[0]);
  volatile float keep = sink[0];
  (void)keep;
  return 2.0 * 8 * kPeakChains * kPeakIters / s * 1e-9;
}

// The peak of the widest ISA this machine runs (0 without AVX2), measured once per process.
inline double fma_peak_gflops() {
  static const double peak = detect_isa() == Isa::Avx512 ? fma_peak_avx512()
                             : detect_isa() == Isa::Avx2 ? fma_peak_avx2()
                                                         : 0.0;
  return peak;
}

}  // namespace fusor::bench
