// The blocked affine map's plane loop (kernels/nchwc/affine_impl.h) compiled for avx2.
#define FUSOR_SIMD_NS simd_avx2_affine
#include "kernels/gemm/simd.h"
#include "kernels/nchwc/affine_impl.h"

namespace fusor::nchwc_detail {
AffineFn affine_fn_avx2(Activation act) { return simd_avx2_affine::affine_fn<simd_avx2_affine::V256>(act); }
}  // namespace fusor::nchwc_detail
