// The attention tile for avx512 (flash_attention_tile.h).
#define FUSOR_SIMD_NS simd_flash_avx512
#include "kernels/gemm/simd.h"
#include "kernels/fused/flash_attention_impl.h"

namespace fusor::fused::flash {

// Register tile: rows, vectors of keys per scores tile, vectors of columns per P x V tile.
TileFns tile_fns_avx512() { return simd_flash_avx512::make_tile_fns<simd_flash_avx512::V512, 7, 4, 4>(); }

}  // namespace fusor::fused::flash
