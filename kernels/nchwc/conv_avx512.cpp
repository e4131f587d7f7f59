// Blocked-convolution tiles compiled for AVX-512: B = 16 is one register, 28 accumulators
// (O x R <= 28) leave room for O weight vectors and the broadcast.
#define FUSOR_SIMD_NS nchwc_avx512
#include "kernels/gemm/simd.h"
#include "kernels/nchwc/conv_tiles.h"

namespace fusor::nchwc_detail {

namespace {
constexpr nchwc_avx512::ConvTileTable<nchwc_avx512::V512, 1, 28> kTable;
TileFn dense(int o, int r, int ps) { return kTable.find(o, r, ps); }
TileFn depthwise(int r, int ps) { return kTable.find_dw(r, ps); }
RunFn dense_run(int o, int r, int ps) { return kTable.find_run(o, r, ps); }
RunFn depthwise_run(int r, int ps) { return kTable.find_dw_run(r, ps); }
constexpr TileKernels kKernels{28, 14, &dense, &depthwise, &dense_run, &depthwise_run};
}  // namespace

const TileKernels* tile_kernels_avx512() { return &kKernels; }

}  // namespace fusor::nchwc_detail
