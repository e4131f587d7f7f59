// The blocked affine map's plane loop (kernels/nchwc/affine_impl.h) compiled for scalar.
#define FUSOR_SIMD_NS simd_scalar_affine
#include "kernels/gemm/simd.h"
#include "kernels/nchwc/affine_impl.h"

namespace fusor::nchwc_detail {
AffineFn affine_fn_scalar(Activation act) { return simd_scalar_affine::affine_fn<simd_scalar_affine::V1>(act); }
}  // namespace fusor::nchwc_detail
