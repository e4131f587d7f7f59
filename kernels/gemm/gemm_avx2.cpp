// AVX2+FMA GEMM kernels (compiled with -mavx2 -mfma; only called after detection).
#define FUSOR_SIMD_NS simd_avx2
#include "kernels/gemm/simd.h"
#include "kernels/gemm/kernel_impl.h"

namespace fusor::gemm_detail {

namespace {
using V = simd_avx2::V256;
// 6x16: 12 accumulators + 2 B vectors + 1 broadcast of the 16 YMM registers.
constexpr GemmKernelSet kSets[] = {
    {Isa::Avx2, "avx2_6x16", 6, 16, 1.0, 120, 256, 384, &simd_avx2::macro<V, 6, 2>, &simd_avx2::apply_epilogue<V>},
};
}  // namespace

const GemmKernelSet* gemm_kernels_avx2(int variant) {
  return variant >= 0 && variant < static_cast<int>(sizeof(kSets) / sizeof(kSets[0])) ? &kSets[variant] : nullptr;
}

}  // namespace fusor::gemm_detail
