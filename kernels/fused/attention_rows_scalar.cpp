// The Attention kernel's row operations for scalar (attention_rows.h).
#define FUSOR_SIMD_NS simd_attn_scalar
#include "kernels/gemm/simd.h"
#include "kernels/fused/attention_rows_impl.h"

namespace fusor::fused::attn {

RowOps row_ops_scalar() { return simd_attn_scalar::make_row_ops<simd_attn_scalar::V1>(); }

}  // namespace fusor::fused::attn
