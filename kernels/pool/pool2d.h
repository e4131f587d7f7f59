// Fast 2-D MaxPool and AveragePool on float tensors, NCHW and NHWC: the "fast" kernels of
// fast_pool_kernels.cpp call these for every 2-D case (any kernel, stride, dilation, padding,
// ceil_mode); the reference kernels keep N-d pools, other types and MaxPool's Indices output.
//
// The window geometry is ConvParams' (kernels/common/conv_params.h), so both implementations
// agree on output shapes and padding. Semantics match the reference kernels exactly:
//   Max: the largest input tap inside X; a window with no tap inside X gives the lowest float.
//   Average: the sum over taps inside X, divided by their count, or with count_include_pad by the
//   taps inside the padded extent [-pad_begin, in + pad_end) (ceil_mode windows may exceed it).
#pragma once
#include <cstdint>

#include "kernels/common/conv_params.h"

namespace fusor {

class ThreadPool;

enum class PoolMode { Max, Average };

struct Pool2d {
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  PoolMode mode = PoolMode::Max;
  bool count_include_pad = false;

  // From resolved 2-D pool geometry (p.nd must be 2).
  static Pool2d from(const ConvParams& p, PoolMode mode, bool count_include_pad);
};

// Calls tap(ih, iw) for each input position in output pixel (oh, ow)'s window, taps outside X
// skipped, in row-major window order.
template <class Tap>
inline void for_each_tap(const Pool2d& g, int64_t oh, int64_t ow, Tap&& tap) {
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t ih = oh * g.sh - g.pad_top + i * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t iw = ow * g.sw - g.pad_left + j * g.dw;
      if (iw < 0 || iw >= g.W) continue;
      tap(ih, iw);
    }
  }
}

// X (N, C, H, W) -> Y (N, C, OH, OW).
void pool2d_nchw(const Pool2d& g, const float* x, float* y, ThreadPool& threads);
// X (N, H, W, C) -> Y (N, OH, OW, C).
void pool2d_nhwc(const Pool2d& g, const float* x, float* y, ThreadPool& threads);

}  // namespace fusor
