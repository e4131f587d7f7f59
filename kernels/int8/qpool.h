// 8-bit MaxPool rows (internal to kernels/int8/qpool.cpp): one NHWC output row of every pixel
// and channel; signed data compared through its sign-flipped bytes. AVX-512 and AVX2 versions.
#pragma once
#include <cstdint>

#include "kernels/pool/pool2d.h"

namespace fusor::int8 {

void maxpool_row_nhwc_avx512(const Pool2d& g, const uint8_t* x, uint8_t* y, int64_t n, int64_t oh, bool sgn);
void maxpool_row_nhwc_avx2(const Pool2d& g, const uint8_t* x, uint8_t* y, int64_t n, int64_t oh, bool sgn);

}  // namespace fusor::int8
