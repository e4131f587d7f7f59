// AVX-512 GEMM kernels (this file is compiled with -mavx512f...; only called after detection).
#define FUSOR_SIMD_NS simd_avx512
#include "kernels/gemm/simd.h"
#include "kernels/gemm/kernel_impl.h"

namespace fusor::gemm_detail {

namespace {
using V = simd_avx512::V512;
// Zen 4 executes a 512-bit FMA per cycle with latency 4: any tile with >= 8 independent
// accumulators keeps the pipe busy; the choice between them is by measurement (bench/gemm_bench).
constexpr GemmKernelSet kSets[] = {
    {Isa::Avx512, "avx512_14x32", 14, 32, 126, 512, 256, &simd_avx512::macro<V, 14, 2>, &simd_avx512::apply_epilogue<V>},
    {Isa::Avx512, "avx512_8x48", 8, 48, 128, 480, 256, &simd_avx512::macro<V, 8, 3>, &simd_avx512::apply_epilogue<V>},
    {Isa::Avx512, "avx512_6x64", 6, 64, 126, 512, 256, &simd_avx512::macro<V, 6, 4>, &simd_avx512::apply_epilogue<V>},
};
}  // namespace

const GemmKernelSet* gemm_kernels_avx512(int variant) {
  return variant >= 0 && variant < static_cast<int>(sizeof(kSets) / sizeof(kSets[0])) ? &kSets[variant] : nullptr;
}

}  // namespace fusor::gemm_detail
