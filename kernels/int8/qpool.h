// 8-bit MaxPool rows (internal to kernels/int8/qpool.cpp): one NHWC output row of every pixel
// and channel; signed data compared through its sign-flipped bytes. AVX-512 and AVX2 versions.
#pragma once
#include <cstdint>

#include "kernels/pool/pool2d.h"

namespace fusor::int8 {

// for_each_tap (kernels/pool/pool2d.h) with the address of each tap's NHWC pixel (its C channels)
// in image n.
template <class Tap>
inline void for_each_nhwc_tap(const Pool2d& g, const uint8_t* x, int64_t n, int64_t oh, int64_t ow, Tap&& tap) {
  for_each_tap(g, oh, ow, [&](int64_t ih, int64_t iw) { tap(x + ((n * g.H + ih) * g.W + iw) * g.C); });
}

void maxpool_row_nhwc_avx512(const Pool2d& g, const uint8_t* x, uint8_t* y, int64_t n, int64_t oh, bool sgn);
void maxpool_row_nhwc_avx2(const Pool2d& g, const uint8_t* x, uint8_t* y, int64_t n, int64_t oh, bool sgn);

}  // namespace fusor::int8
