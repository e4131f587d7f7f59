// AVX-512 Winograd strips (compiled with -mavx512f...; only called after detection): 16 channels
// per vector, register blocks of 14 tiles x 32 output channels (28 accumulators).
#define FUSOR_SIMD_NS simd_avx512
#include "kernels/gemm/simd.h"
#include "kernels/winograd/winograd_impl.h"

namespace fusor::winograd_detail {

namespace {
using V = simd_avx512::V512;
constexpr KernelSet kSet = {Isa::Avx512, "avx512_14x32", 16, 14, 32, &simd_avx512::wino::strip_any<V, 14, 2>};
}  // namespace

const KernelSet* kernels_avx512() { return &kSet; }

}  // namespace fusor::winograd_detail
