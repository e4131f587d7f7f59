// The Attention kernel's row operations for avx2 (attention_rows.h).
#define FUSOR_SIMD_NS simd_attn_avx2
#include "kernels/gemm/simd.h"
#include "kernels/fused/attention_rows_impl.h"

namespace fusor::fused::attn {

RowOps row_ops_avx2() { return simd_attn_avx2::make_row_ops<simd_attn_avx2::V256>(); }

}  // namespace fusor::fused::attn
