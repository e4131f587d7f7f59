// AVX2 Winograd strips (compiled with -mavx2 -mfma; only called after detection): 8 channels per
// vector, register blocks of 6 tiles x 16 output channels.
#define FUSOR_SIMD_NS simd_avx2
#include "kernels/gemm/simd.h"
#include "kernels/winograd/winograd_impl.h"

namespace fusor::winograd_detail {

namespace {
using V = simd_avx2::V256;
constexpr KernelSet kSet = {Isa::Avx2, "avx2_6x16", 8, 6, 16, &simd_avx2::wino::strip_any<V, 6, 2>};
}  // namespace

const KernelSet* kernels_avx2() { return &kSet; }

}  // namespace fusor::winograd_detail
