// AVX2+FMA GEMM kernels (compiled with -mavx2 -mfma; only called after detection).
#include <cstdint>

#define FUSOR_SIMD_NS simd_avx2
#include "kernels/gemm/simd.h"
#include "kernels/gemm/kernel_impl.h"

namespace fusor::gemm_detail {

namespace {
using V = simd_avx2::V256;
// 6x16: 12 accumulators + 2 B vectors + 1 broadcast of the 16 YMM registers.
// A is read in place at any width (K >= 384): packing it cost more than it saved on Zen 3
// (bench/gemm_bench, min of 2 x 3 alternated, packed -> in place: 384 x 384 x 1536 5500 -> 5052
// us, 784 x 192 x 768 2703 -> 2557, 128 x 384 x 1536 1763 -> 1708; no shape clearly slower).
constexpr GemmKernelSet kSets[] = {
    {Isa::Avx2, "avx2_6x16", 6, 16, 1.0, 120, 256, 384, &simd_avx2::macro<V, 6, 2>, &simd_avx2::apply_epilogue<V>,
     INT64_MAX},
};
}  // namespace

const GemmKernelSet* gemm_kernels_avx2(int variant) {
  return variant >= 0 && variant < static_cast<int>(sizeof(kSets) / sizeof(kSets[0])) ? &kSets[variant] : nullptr;
}

}  // namespace fusor::gemm_detail
