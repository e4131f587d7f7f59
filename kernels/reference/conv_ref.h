// Direct (no im2col) N-d convolution loops shared by Conv, ConvInteger and QLinearConv.
//
// conv_forward_ref computes, for every batch n, output channel m (group g = m / (M/group)) and
// output position o:
//   y[n, m, o] = sum over c < C/group and kernel taps k of
//                xv(x[n, g*C/group + c, o*stride - pad_begin + k*dilation]) * wv(w[m, c, k])
// Taps that fall outside X contribute nothing (zero padding; for the integer ops that is padding
// with the zero point, whose shifted value is zero). Layout is NCHW-style row-major. Work is split
// over (n, m) pairs, so each task owns whole output planes.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/common/conv_params.h"
#include "kernels/thread_pool.h"

namespace fusor {

// Row-major coordinates of every kernel tap: taps[k * nd + d].
inline std::vector<int64_t> kernel_tap_coords(const ConvParams& p) {
  const int64_t ks = p.kernel_size();
  std::vector<int64_t> taps(static_cast<size_t>(ks * p.nd));
  for (int64_t k = 0; k < ks; ++k) {
    int64_t rest = k;
    for (int d = p.nd - 1; d >= 0; --d) {
      taps[k * p.nd + d] = rest % p.kernel[d];
      rest /= p.kernel[d];
    }
  }
  return taps;
}

// Advances row-major coordinates `c` within `dims` by one.
inline void next_coord(std::vector<int64_t>& c, const Shape& dims) {
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (++c[d] < dims[d]) return;
    c[d] = 0;
  }
}

template <typename Acc, typename TX, typename TW, typename TY, typename FX, typename FW>
void conv_forward_ref(const ConvParams& p, const TX* x, const TW* w, TY* y, FX xv, FW wv, ThreadPool& pool) {
  const int nd = p.nd;
  const int64_t ks = p.kernel_size(), os = p.out_spatial_size(), is = p.in_spatial_size();
  const int64_t cg = p.in_per_group(), mg = p.out_per_group(), M = p.out_channels;
  const std::vector<int64_t> taps = kernel_tap_coords(p);
  pool.parallel_for(p.batch * M, [&](int64_t t0, int64_t t1) {
    std::vector<int64_t> o(nd);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / M, m = t % M, g = m / mg;
      const TX* xg = x + (n * p.in_channels + g * cg) * is;
      const TW* wm = w + m * cg * ks;
      TY* ym = y + t * os;
      std::fill(o.begin(), o.end(), 0);
      for (int64_t op = 0; op < os; ++op, next_coord(o, p.out)) {
        Acc acc = 0;
        for (int64_t k = 0; k < ks; ++k) {
          int64_t off = 0;
          bool inside = true;
          for (int d = 0; d < nd && inside; ++d) {
            const int64_t i = o[d] * p.strides[d] - p.pad_begin[d] + taps[k * nd + d] * p.dilations[d];
            inside = i >= 0 && i < p.in[d];
            off = off * p.in[d] + i;
          }
          if (!inside) continue;
          for (int64_t c = 0; c < cg; ++c) acc += static_cast<Acc>(xv(xg[c * is + off])) * static_cast<Acc>(wv(wm[c * ks + k]));
        }
        ym[op] = static_cast<TY>(acc);
      }
    }
  });
}

}  // namespace fusor
