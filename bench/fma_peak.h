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

// The int8 yardstick (kernels/int8/qgemm.h): vpdpbusd, 4 u8 x s8 products summed into each
// 32-bit lane, so 2 x 4 x lanes ops per instruction. The same method as the FMAs (24 independent
// chains, no memory operand), but the loop is written in assembly: with an intrinsic array of 24
// accumulators GCC 12 keeps a copy on the stack and stores it on every iteration (whatever the
// unroll pragmas), and the figure is then the store rate, about a third of the real peak.
constexpr int64_t kVnniIters = 10'000'000;

// The loop on registers R0 (all bits set), R1 (bytes 1) and R8..R31 (the 24 chains), R "zmm" or
// "ymm"; %0 the iteration count.
#define FUSOR_VNNI_PEAK_LOOP(R) \
  "vpternlogd $0xff, %%" R "0, %%" R "0, %%" R "0\n\t" \
  "vpabsb %%" R "0, %%" R "1\n\t" \
  "vpxord %%" R "8, %%" R "8, %%" R "8\n\t" \
  "vpxord %%" R "9, %%" R "9, %%" R "9\n\t" \
  "vpxord %%" R "10, %%" R "10, %%" R "10\n\t" \
  "vpxord %%" R "11, %%" R "11, %%" R "11\n\t" \
  "vpxord %%" R "12, %%" R "12, %%" R "12\n\t" \
  "vpxord %%" R "13, %%" R "13, %%" R "13\n\t" \
  "vpxord %%" R "14, %%" R "14, %%" R "14\n\t" \
  "vpxord %%" R "15, %%" R "15, %%" R "15\n\t" \
  "vpxord %%" R "16, %%" R "16, %%" R "16\n\t" \
  "vpxord %%" R "17, %%" R "17, %%" R "17\n\t" \
  "vpxord %%" R "18, %%" R "18, %%" R "18\n\t" \
  "vpxord %%" R "19, %%" R "19, %%" R "19\n\t" \
  "vpxord %%" R "20, %%" R "20, %%" R "20\n\t" \
  "vpxord %%" R "21, %%" R "21, %%" R "21\n\t" \
  "vpxord %%" R "22, %%" R "22, %%" R "22\n\t" \
  "vpxord %%" R "23, %%" R "23, %%" R "23\n\t" \
  "vpxord %%" R "24, %%" R "24, %%" R "24\n\t" \
  "vpxord %%" R "25, %%" R "25, %%" R "25\n\t" \
  "vpxord %%" R "26, %%" R "26, %%" R "26\n\t" \
  "vpxord %%" R "27, %%" R "27, %%" R "27\n\t" \
  "vpxord %%" R "28, %%" R "28, %%" R "28\n\t" \
  "vpxord %%" R "29, %%" R "29, %%" R "29\n\t" \
  "vpxord %%" R "30, %%" R "30, %%" R "30\n\t" \
  "vpxord %%" R "31, %%" R "31, %%" R "31\n\t" \
  "1:\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "8\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "9\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "10\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "11\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "12\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "13\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "14\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "15\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "16\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "17\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "18\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "19\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "20\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "21\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "22\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "23\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "24\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "25\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "26\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "27\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "28\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "29\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "30\n\t" \
  "vpdpbusd %%" R "1, %%" R "0, %%" R "31\n\t" \
  "dec %0\n\t" \
  "jnz 1b\n\t"
#define FUSOR_VNNI_PEAK_CLOBBERS "xmm0", "xmm1", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "cc"

__attribute__((target("avx512f,avx512vnni"), noinline)) inline double vnni_peak_avx512() {
  int64_t n = kVnniIters;
  const double t0 = thread_seconds();
  __asm__ volatile(FUSOR_VNNI_PEAK_LOOP("zmm") : "+r"(n) : : FUSOR_VNNI_PEAK_CLOBBERS);
  return 2.0 * 64 * 24 * kVnniIters / (thread_seconds() - t0) * 1e-9;
}

__attribute__((target("avx512f,avx512vl,avx512vnni"), noinline)) inline double vnni_peak_avx512_ymm() {
  int64_t n = kVnniIters;
  const double t0 = thread_seconds();
  __asm__ volatile(FUSOR_VNNI_PEAK_LOOP("ymm") : "+r"(n) : : FUSOR_VNNI_PEAK_CLOBBERS);
  return 2.0 * 32 * 24 * kVnniIters / (thread_seconds() - t0) * 1e-9;
}

#undef FUSOR_VNNI_PEAK_LOOP
#undef FUSOR_VNNI_PEAK_CLOBBERS

// The peak of the widest ISA this machine runs (0 without AVX2), measured once per process.
inline double fma_peak_gflops() {
  static const double peak = detect_isa() == Isa::Avx512 ? fma_peak_avx512()
                             : detect_isa() == Isa::Avx2 ? fma_peak_avx2()
                                                         : 0.0;
  return peak;
}

}  // namespace fusor::bench
