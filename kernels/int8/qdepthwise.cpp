#include "kernels/int8/qdepthwise.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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

QDepthwise4::QDepthwise4(int64_t C, int64_t kh_n, int64_t kw_n, const int32_t* weights, int64_t stride,
                         const QEpilogue& ep, bool signed_act)
    : channels(C), blocks((C + 63) / 64), k_h(kh_n), k_w(kw_n), groups((kw_n + 3) / 4) {
  for (int64_t t = 0; t < k_h * k_w; ++t)
    for (int64_t c = 0; c < C; ++c)
      if (weights[t * stride + c] < -128 || weights[t * stride + c] > 127) return;  // empty()
  // Lane i of vector v of block b holds channel 64b + 16 (i / 4) + 4v + i % 4.
  auto channel = [](int64_t b, int64_t v, int64_t i) { return 64 * b + 16 * (i / 4) + 4 * v + i % 4; };
  w.assign(static_cast<size_t>(k_h * groups * blocks * 256), 0);
  offset.assign(static_cast<size_t>(blocks * 64), 0);
  mult.assign(offset.size(), 0.0f);
  add.assign(offset.size(), 0.0f);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t v = 0; v < 4; ++v)
      for (int64_t i = 0; i < 16; ++i) {
        const int64_t c = channel(b, v, i), at = b * 64 + v * 16 + i;
        if (c >= C) continue;
        int64_t sum = 0, sum_abs = 0;
        for (int64_t kh = 0; kh < k_h; ++kh)
          for (int64_t kw = 0; kw < k_w; ++kw) {
            const int32_t wv = weights[(kh * k_w + kw) * stride + c];
            sum += wv;
            sum_abs += std::abs(wv);
            const int64_t g = kw / 4, t = kw % 4;
            w[static_cast<size_t>((((kh * groups + g) * blocks + b) * 4 + v) * 64 + i * 4 + t)] = static_cast<int8_t>(wv);
          }
        offset[static_cast<size_t>(at)] = ep.col_offset[c] - (signed_act ? static_cast<int32_t>(128 * sum) : 0);
        mult[static_cast<size_t>(at)] = ep.mult[c];
        add[static_cast<size_t>(at)] = ep.add[c];
        // The accumulator is at most |offset| + 255 sum |w| away from 0.
        const double bound = (std::abs(static_cast<double>(offset[static_cast<size_t>(at)])) + 255.0 * static_cast<double>(sum_abs)) *
                                 std::fabs(static_cast<double>(ep.mult[c])) + std::fabs(static_cast<double>(ep.add[c]));
        if (!(bound < 1.0e9)) clamp_in_float = true;
      }
}

QDepthwiseAvx2::QDepthwiseAvx2(int64_t C, int64_t taps_n, const int32_t* weights, int64_t stride)
    : channels(C), blocks((C + 15) / 16), taps(taps_n) {
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t c = 0; c < C; ++c)
      if (weights[t * stride + c] < -32767 || weights[t * stride + c] > 32767) return;  // empty()
  w.assign(static_cast<size_t>(blocks * taps * 32), 0);
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t b = c / 16, lane = c % 16, parity = c % 2;
      w[static_cast<size_t>(((b * taps + t) * 2 + parity) * 16 + lane)] = static_cast<int16_t>(weights[t * stride + c]);
    }
}

}  // namespace fusor::int8
