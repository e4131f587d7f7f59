#include "kernels/int8/qdepthwise.h"

#include <vector>

namespace fusor::int8 {

void qdepthwise_scalar(const QDepthwiseArgs& a, int64_t row0, int64_t row1) {
  const Conv2dShape& s = *a.s;
  const int64_t C = s.out_c;
  std::vector<int32_t> acc(static_cast<size_t>(C));
  for (int64_t row = row0; row < row1; ++row) {
    const int64_t n = row / s.out_h, oh = row % s.out_h;
    for (int64_t ow = 0; ow < s.out_w; ++ow) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kh = 0; kh < s.k_h; ++kh) {
        const int64_t ih = oh * s.stride_h - s.pad_t + kh * s.dil_h;
        for (int64_t kw = 0; kw < s.k_w; ++kw) {
          const int64_t iw = ow * s.stride_w - s.pad_l + kw * s.dil_w;
          const int32_t* w = a.weights + (kh * s.k_w + kw) * a.w_stride;
          if (ih < 0 || ih >= s.in_h || iw < 0 || iw >= s.in_w) {
            for (int64_t c = 0; c < C; ++c) acc[c] += a.x_zero * w[c];
            continue;
          }
          const uint8_t* px = a.x + ((n * s.in_h + ih) * s.in_w + iw) * C;
          for (int64_t c = 0; c < C; ++c)
            acc[c] += (a.signed_act ? static_cast<int32_t>(static_cast<int8_t>(px[c])) : static_cast<int32_t>(px[c])) * w[c];
        }
      }
      const int64_t pixel = row * s.out_w + ow;
      for (int64_t c = 0; c < C; ++c) qepilogue_scalar(a.ep, pixel, c, acc[c], a.y, C);
    }
  }
}

}  // namespace fusor::int8
