// The attention tile for scalar (flash_attention_tile.h).
#define FUSOR_SIMD_NS simd_flash_scalar
#include "kernels/gemm/simd.h"
#include "kernels/fused/flash_attention_impl.h"

namespace fusor::fused::flash {

// Register tile: rows, vectors of keys per scores tile, vectors of columns per P x V tile.
TileFns tile_fns_scalar() { return simd_flash_scalar::make_tile_fns<simd_flash_scalar::V1, 4, 4, 4>(); }

}  // namespace fusor::fused::flash
