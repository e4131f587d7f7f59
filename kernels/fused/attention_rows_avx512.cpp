// The Attention kernel's row operations for avx512 (attention_rows.h).
#define FUSOR_SIMD_NS simd_attn_avx512
#include "kernels/gemm/simd.h"
#include "kernels/fused/attention_rows_impl.h"

namespace fusor::fused::attn {

RowOps row_ops_avx512() { return simd_attn_avx512::make_row_ops<simd_attn_avx512::V512>(); }

}  // namespace fusor::fused::attn
