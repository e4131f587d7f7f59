// AVX-512 GEMM kernels (this file is compiled with -mavx512f...; only called after detection).
#define FUSOR_SIMD_NS simd_avx512
#include "kernels/gemm/simd.h"
#include "kernels/gemm/kernel_impl.h"

namespace fusor::gemm_detail {

namespace {
using V = simd_avx512::V512;
// Zen 4 executes a 512-bit FMA per cycle with latency 4: any tile with >= 8 independent
// accumulators keeps the pipe busy; the choice between them is by measurement (bench/gemm_bench,
// four alternated rounds, max GFLOP/s, 14x32 / 6x64): 384 x 384 x 1536 90.5 / 105.6, 128 x 384 x
// 1536 94.1 / 107.1, 1024^3 95.3 / 101.4, 16 x 768 x 768 86.6 / 93.4; 14 broadcasts a k step
// against 6 and an A panel that, with its 32 KiB B panel, overflows L1 between its reuses. 14x32
// stays for narrow products whose columns fill 32-wide tiles better (3136 x 96 x 384: 94.1 /
// 70.2, 6x64 pads 96 columns to 128). 8x48 only by FUSOR_GEMM_TILE (no shape where it wins
// clearly).
//
// A read in place (gemm.cpp) up to 32 register tiles of columns and from K = 128: on a Xeon (AVX-512,
// 2 MiB L2) packing A cost more than the in-place reads on every product tried. Interleaved A/B in
// one process (B and C cycled through 24 MB so weights come from L3 as in a model, medians of 120
// alternated calls, 1 thread, the bounds before (8 tiles, K >= 384) -> these): 197 x 576 x 192
// 362 -> 328 us, 197 x 192 x 192 219 -> 157, 197 x 768 x 192 672 -> 623, 128 x 256 x 256 202 -> 159,
// 128 x 768 x 256 392 -> 360, 128 x 1024 x 256 521 -> 487, 128 x 1152 x 384 880 -> 845, 384 x 1152 x
// 384 3167 -> 3048; the rest within 1% (128 x 1536 x 384, 384 x 384 x 1536, 3136 x 96 x 384, 49 x
// 3072 x 768).
// k blocks of up to 384 steps (K = 384 in one pass over C; 256 before), the same for every set so
// that a product sums in the same order whichever operand is packed: fusor
// bench --profile per-node minima of alternated runs, bert_like S = 128 -9% and -5% at 1 and 2
// threads; vit_tiny, gpt_like, convnext_tiny unchanged.
constexpr GemmKernelSet kSets[] = {
    {Isa::Avx512, "avx512_6x64", 6, 64, 1.0, 126, 512, 384, &simd_avx512::macro<V, 6, 4>, &simd_avx512::apply_epilogue<V>,
     32, 128},
    {Isa::Avx512, "avx512_14x32", 14, 32, 0.92, 126, 512, 384, &simd_avx512::macro<V, 14, 2>,
     &simd_avx512::apply_epilogue<V>, 32, 128},
    {Isa::Avx512, "avx512_8x48", 8, 48, 0.0, 128, 480, 384, &simd_avx512::macro<V, 8, 3>, &simd_avx512::apply_epilogue<V>,
     32, 128},
};
}  // namespace

const GemmKernelSet* gemm_kernels_avx512(int variant) {
  return variant >= 0 && variant < static_cast<int>(sizeof(kSets) / sizeof(kSets[0])) ? &kSets[variant] : nullptr;
}

}  // namespace fusor::gemm_detail
