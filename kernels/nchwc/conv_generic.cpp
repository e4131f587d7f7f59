// The generic blocked-convolution tile: the same computation as conv_impl.h's DenseTile with
// every size a run-time value, in plain loops (the scalar path, block 8, unusual strides).
#include <algorithm>

#define FUSOR_SIMD_NS nchwc_scalar
#include "kernels/gemm/simd.h"
#include "kernels/nchwc/conv_impl.h"

namespace fusor::nchwc_detail {

void tile_generic(const TileArgs& a, int o_blocks, int r_pixels, int ps, int block) {
  const int K = o_blocks * block;
  float acc[kMaxO * 16][kMaxR];
  for (int k = 0; k < K; ++k) {
    const int o = k / block, j = k % block;
    for (int r = 0; r < r_pixels; ++r)
      acc[k][r] = a.first ? (a.bias ? a.bias[k] : 0.0f) : a.y[o * a.y_block_stride + r * block + j];
  }
  for (int64_t ib = 0; ib < a.nib; ++ib) {
    const float* x = a.x + ib * a.x_ib_stride;
    const float* w = a.w + ib * a.w_ib_stride;
    for (int i = 0; i < a.nseg; ++i) {
      const Segment& sg = a.seg[i];
      for (int s = sg.s0; s < sg.s1; ++s) {
        const float* xs = x + a.off[s];
        const float* ws = w + s * a.w_step;
        for (int r = sg.lead; r < r_pixels - sg.trail; ++r) {
          const float xv = xs[static_cast<int64_t>(r) * ps];
          for (int k = 0; k < K; ++k) acc[k][r] += xv * ws[k];
        }
      }
    }
  }
  for (int k = 0; k < K; ++k) {
    const int o = k / block, j = k % block;
    for (int r = 0; r < r_pixels; ++r) {
      float t = acc[k][r];
      const int64_t at = o * a.y_block_stride + r * block + j;
      if (a.last) {
        if (a.z) t += a.z[at];
        t = std::min(std::max(t, a.lo), a.hi);
      }
      a.y[at] = t;
    }
  }
}

}  // namespace fusor::nchwc_detail

namespace fusor::nchwc_detail {

void tile_depthwise_generic(const TileArgs& a, int r_pixels, int ps, int block) {
  float acc[16][kMaxR];
  for (int j = 0; j < block; ++j)
    for (int r = 0; r < r_pixels; ++r) acc[j][r] = a.first ? (a.bias ? a.bias[j] : 0.0f) : a.y[r * block + j];
  for (int i = 0; i < a.nseg; ++i) {
    const Segment& sg = a.seg[i];
    for (int s = sg.s0; s < sg.s1; ++s) {
      const float* xs = a.x + a.off[s];
      const float* ws = a.w + static_cast<int64_t>(s) * block;
      for (int r = sg.lead; r < r_pixels - sg.trail; ++r)
        for (int j = 0; j < block; ++j) acc[j][r] += xs[static_cast<int64_t>(r) * ps + j] * ws[j];
    }
  }
  for (int j = 0; j < block; ++j)
    for (int r = 0; r < r_pixels; ++r) {
      float t = acc[j][r];
      if (a.last) {
        if (a.z) t += a.z[r * block + j];
        t = std::min(std::max(t, a.lo), a.hi);
      }
      a.y[r * block + j] = t;
    }
}

}  // namespace fusor::nchwc_detail

namespace fusor::nchwc_detail {

void run_generic(const TileRun& run, int o, int ps) {
  nchwc_scalar::for_each_tile(run, [&](const TileArgs& a, int64_t r) {
    tile_generic(a, o, static_cast<int>(r), ps, static_cast<int>(run.block));
  });
}

void run_depthwise_generic(const TileRun& run, int ps) {
  nchwc_scalar::for_each_tile(run, [&](const TileArgs& a, int64_t r) {
    tile_depthwise_generic(a, static_cast<int>(r), ps, static_cast<int>(run.block));
  });
}

}  // namespace fusor::nchwc_detail
