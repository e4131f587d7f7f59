// Depthwise int8 convolution on NHWC data (internal to kernels/int8; QConvWeights::run picks it):
// for output rows [row0, row1) (row = n * out_h + oh), every pixel's channels are
//     acc[c] = sum over taps of x[tap][c] * w[tap][c]   (w with its zero point removed)
// with padded taps reading X's zero point, then the epilogue (one epilogue row per pixel, its
// col_offset holding bias - x_zero * sum_t w[t][c]).
#pragma once
#include <cstdint>

#include "kernels/conv/conv.h"
#include "kernels/int8/qgemm.h"

namespace fusor::int8 {

struct QDepthwiseArgs {
  const Conv2dShape* s = nullptr;
  const uint8_t* x = nullptr;   // N, H, W, C (int8 when signed_act)
  const uint8_t* z = nullptr;   // the residual, shaped like y, or null
  uint8_t* y = nullptr;         // N, OH, OW, C
  const int32_t* weights = nullptr;  // [tap][w_stride]
  int64_t w_stride = 0;
  int32_t x_zero = 0;
  bool signed_act = false;
  QEpilogue ep;                 // residual_ld = C when z is given
};

void qdepthwise_scalar(const QDepthwiseArgs& a, int64_t row0, int64_t row1);
void qdepthwise_avx512(const QDepthwiseArgs& a, int64_t row0, int64_t row1);

}  // namespace fusor::int8
