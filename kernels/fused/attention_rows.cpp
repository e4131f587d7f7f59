#include "kernels/fused/attention_rows.h"

namespace fusor::fused::attn {

// Each ISA's table is built on first use only: the per-ISA files are compiled for that ISA, so
// their code runs only after detection says it may.
const RowOps& row_ops(Isa isa) {
  switch (clamp_isa(isa)) {
    case Isa::Avx512: {
      static const RowOps ops = row_ops_avx512();
      return ops;
    }
    case Isa::Avx2: {
      static const RowOps ops = row_ops_avx2();
      return ops;
    }
    default: {
      static const RowOps ops = row_ops_scalar();
      return ops;
    }
  }
}

}  // namespace fusor::fused::attn
