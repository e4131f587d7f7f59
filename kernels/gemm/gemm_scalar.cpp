// Baseline GEMM kernels: plain C++ for machines without AVX2 (and the FUSOR_ISA=scalar path).
#define FUSOR_SIMD_NS simd_scalar
#include "kernels/gemm/simd.h"
#include "kernels/gemm/kernel_impl.h"

namespace fusor::gemm_detail {

namespace {
using V = simd_scalar::V1;
constexpr GemmKernelSet kSets[] = {
    {Isa::Scalar, "scalar_4x8", 4, 8, 1.0, 128, 512, 256, &simd_scalar::macro<V, 4, 8>, &simd_scalar::apply_epilogue<V>},
};
}  // namespace

const GemmKernelSet* gemm_kernels_scalar(int variant) {
  return variant >= 0 && variant < static_cast<int>(sizeof(kSets) / sizeof(kSets[0])) ? &kSets[variant] : nullptr;
}

}  // namespace fusor::gemm_detail
