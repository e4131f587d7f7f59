// AVX-512 rows of pool2d_nhwc (pool2d.h) when the channel count is a multiple of 16, the case of
// the blocked layout's pools (fusor.NchwcMaxPool/AveragePool: each channel block is an NHWC image
// of 16 channels): one register per 16 channels, the valid taps of a window found once per output
// position instead of tested per tap and channel. Results are bit-identical to the portable loop:
// the same taps in the same order; max keeps the running value when a tap is NaN, as std::max
// does; averages add in the same order and divide by the same count.
#pragma once
#include <cstdint>

#include "kernels/pool/pool2d.h"

namespace fusor::pool_avx512 {

// Output rows [r0, r1) of Y (N, OH, OW, C), row r = n * OH + oh. rows/cols: the averaging
// divisor's factors per output row and column (null for Max).
void nhwc_rows(const Pool2d& g, const float* x, float* y, int64_t r0, int64_t r1, const float* rows,
               const float* cols);

}  // namespace fusor::pool_avx512
