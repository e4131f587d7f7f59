// Baseline Winograd strips: one channel per "vector", register blocks of 4 tiles x 4 channels.
#define FUSOR_SIMD_NS simd_scalar
#include "kernels/gemm/simd.h"
#include "kernels/winograd/winograd_impl.h"

namespace fusor::winograd_detail {

namespace {
using V = simd_scalar::V1;
constexpr KernelSet kSet = {Isa::Scalar, "scalar_4x4", 1, 4, 4, &simd_scalar::wino::strip_any<V, 4, 4>};
}  // namespace

const KernelSet* kernels_scalar() { return &kSet; }

}  // namespace fusor::winograd_detail
