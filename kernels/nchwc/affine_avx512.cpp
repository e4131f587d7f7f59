// The blocked affine map's plane loop (kernels/nchwc/affine_impl.h) compiled for avx512.
#define FUSOR_SIMD_NS simd_avx512_affine
#include "kernels/gemm/simd.h"
#include "kernels/nchwc/affine_impl.h"

namespace fusor::nchwc_detail {
AffineFn affine_fn_avx512(Activation act) { return simd_avx512_affine::affine_fn<simd_avx512_affine::V512>(act); }
}  // namespace fusor::nchwc_detail
