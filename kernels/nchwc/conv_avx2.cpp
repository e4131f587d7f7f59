// Blocked-convolution tiles compiled for AVX2: a block of 16 channels is two 8-lane registers;
// 12 accumulator registers (O x R x 2 <= 12) of the 16; half-block tiles of grouped convs with
// groups inside a block half (1 x R x 2 <= 14, one weight vector); half-last tiles for out_c % 16
// == 8 ((2 O - 1) x R <= 12); 1x1 convs in chunks of 16 KiB of weights (L1: a weight vector
// serves only 3 pixels).
#define FUSOR_SIMD_NS nchwc_avx2
#include "kernels/gemm/simd.h"
#include "kernels/nchwc/conv_tiles.h"

namespace fusor::nchwc_detail {

namespace {
constexpr nchwc_avx2::ConvTileTable<nchwc_avx2::V256, 2, 12> kTable;
TileFn dense(int o, int r, int ps) { return kTable.find(o, r, ps); }
TileFn depthwise(int r, int ps) { return kTable.find_dw(r, ps); }
RunFn dense_run(int o, int r, int ps) { return kTable.find_run(o, r, ps); }
RunFn depthwise_run(int r, int ps) { return kTable.find_dw_run(r, ps); }
TileFn half(int r, int ps) { return kTable.find_half(r, ps); }
RunFn half_run(int r, int ps) { return kTable.find_half_run(r, ps); }
TileFn half_last(int o, int r, int ps) { return kTable.find_half_last(o, r, ps); }
RunFn half_last_run(int o, int r, int ps) { return kTable.find_half_last_run(o, r, ps); }
constexpr TileKernels kKernels{6,     6,     &dense, &depthwise, &dense_run,  &depthwise_run, kTable.kHalfMaxR,
                               &half, &half_run, 12, &half_last, &half_last_run, 16 * 1024};
}  // namespace

const TileKernels* tile_kernels_avx2() { return &kKernels; }

}  // namespace fusor::nchwc_detail
