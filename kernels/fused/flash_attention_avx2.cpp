// The attention tile for avx2 (flash_attention_tile.h).
#define FUSOR_SIMD_NS simd_flash_avx2
#include "kernels/gemm/simd.h"
#include "kernels/fused/flash_attention_impl.h"

namespace fusor::fused::flash {

// Register tile: rows, vectors of keys per scores tile, vectors of columns per P x V tile.
TileFns tile_fns_avx2() { return simd_flash_avx2::make_tile_fns<simd_flash_avx2::V256, 6, 2, 2>(); }

}  // namespace fusor::fused::flash
