#include "kernels/pool/pool2d.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/pool/pool2d_avx512.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

constexpr float kLowest = std::numeric_limits<float>::lowest();

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Along one axis: the output positions o in [lo, hi) whose tap at input offset o * stride + off
// lies inside [0, in).
struct Span {
  int64_t lo, hi;
};
Span inside(int64_t off, int64_t stride, int64_t in, int64_t out) {
  const int64_t lo = std::max<int64_t>(0, ceil_div(-off, stride));
  const int64_t hi = std::min<int64_t>(out, floor_div(in - 1 - off, stride) + 1);
  return {lo, std::max(lo, hi)};
}

// Per output position along one axis, the averaging divisor's factor: taps inside X, or with
// count_include_pad taps inside the padded extent.
std::vector<float> axis_counts(int64_t out, int64_t k, int64_t stride, int64_t dil, int64_t pad_begin,
                               int64_t pad_end, int64_t in, bool include_pad) {
  std::vector<float> c(out);
  const int64_t lo_lim = include_pad ? -pad_begin : 0, hi_lim = include_pad ? in + pad_end : in;
  for (int64_t o = 0; o < out; ++o) {
    int64_t n = 0;
    for (int64_t t = 0; t < k; ++t) {
      const int64_t i = o * stride - pad_begin + t * dil;
      n += i >= lo_lim && i < hi_lim;
    }
    c[o] = static_cast<float>(n);
  }
  return c;
}

// One output row of one NCHW plane: every tap row inside X, every tap column over the output
// columns whose tap lies inside X. Stride-1 loops are unit-stride and vectorize.
void nchw_row(const Pool2d& g, const float* plane, float* yr, int64_t oh) {
  const bool max = g.mode == PoolMode::Max;
  std::fill(yr, yr + g.OW, max ? kLowest : 0.f);
  for (int64_t th = 0; th < g.kh; ++th) {
    const int64_t ih = oh * g.sh - g.pad_top + th * g.dh;
    if (ih < 0 || ih >= g.H) continue;
    const float* xr = plane + ih * g.W;
    for (int64_t tw = 0; tw < g.kw; ++tw) {
      const int64_t off = tw * g.dw - g.pad_left;
      const Span s = inside(off, g.sw, g.W, g.OW);
      if (g.sw == 1) {
        const float* xs = xr + off;
        if (max)
          for (int64_t o = s.lo; o < s.hi; ++o) yr[o] = std::max(yr[o], xs[o]);
        else
          for (int64_t o = s.lo; o < s.hi; ++o) yr[o] += xs[o];
      } else {
        if (max)
          for (int64_t o = s.lo; o < s.hi; ++o) yr[o] = std::max(yr[o], xr[o * g.sw + off]);
        else
          for (int64_t o = s.lo; o < s.hi; ++o) yr[o] += xr[o * g.sw + off];
      }
    }
  }
}

}  // namespace

Pool2d Pool2d::from(const ConvParams& p, PoolMode mode, bool count_include_pad) {
  Pool2d g;
  g.N = p.batch;
  g.C = p.in_channels;
  g.H = p.in[0];
  g.W = p.in[1];
  g.OH = p.out[0];
  g.OW = p.out[1];
  g.kh = p.kernel[0];
  g.kw = p.kernel[1];
  g.sh = p.strides[0];
  g.sw = p.strides[1];
  g.dh = p.dilations[0];
  g.dw = p.dilations[1];
  g.pad_top = p.pad_begin[0];
  g.pad_left = p.pad_begin[1];
  g.pad_bottom = p.pad_end[0];
  g.pad_right = p.pad_end[1];
  g.mode = mode;
  g.count_include_pad = count_include_pad;
  return g;
}

void pool2d_nchw(const Pool2d& g, const float* x, float* y, ThreadPool& threads) {
  const bool avg = g.mode == PoolMode::Average;
  std::vector<float> rows, cols;
  if (avg) {
    rows = axis_counts(g.OH, g.kh, g.sh, g.dh, g.pad_top, g.pad_bottom, g.H, g.count_include_pad);
    cols = axis_counts(g.OW, g.kw, g.sw, g.dw, g.pad_left, g.pad_right, g.W, g.count_include_pad);
  }
  const int64_t planes = g.N * g.C, in_plane = g.H * g.W, out_plane = g.OH * g.OW;
  // Work items are output rows, so a single plane (N = C = 1) still spreads over the threads.
  // Cost model: ~4 window taps per ns.
  const double row_ns = static_cast<double>(g.OW * g.kh * g.kw) / 4.0;
  threads.parallel_for_cost(
      planes * g.OH, row_ns,
      [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t plane = r / g.OH, oh = r % g.OH;
          float* yr = y + plane * out_plane + oh * g.OW;
          nchw_row(g, x + plane * in_plane, yr, oh);
          if (avg) {
            const float rc = rows[oh];
            for (int64_t o = 0; o < g.OW; ++o) {
              yr[o] /= rc * cols[o];
            }
          }
        }
      });
}

void pool2d_nhwc(const Pool2d& g, const float* x, float* y, ThreadPool& threads) {
  const bool max = g.mode == PoolMode::Max;
  std::vector<float> rows, cols;
  if (!max) {
    rows = axis_counts(g.OH, g.kh, g.sh, g.dh, g.pad_top, g.pad_bottom, g.H, g.count_include_pad);
    cols = axis_counts(g.OW, g.kw, g.sw, g.dw, g.pad_left, g.pad_right, g.W, g.count_include_pad);
  }
  const int64_t C = g.C;
  const bool wide = C % 16 == 0 && active_isa() == Isa::Avx512;
  threads.parallel_for_cost(g.N * g.OH, static_cast<double>(g.OW * g.kh * g.kw * g.C) / 8.0, [&](int64_t r0, int64_t r1) {
    if (wide) return pool_avx512::nhwc_rows(g, x, y, r0, r1, rows.data(), cols.data());
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / g.OH, oh = r % g.OH;
      const float* xn = x + n * g.H * g.W * C;
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        float* yp = y + ((n * g.OH + oh) * g.OW + ow) * C;
        std::fill(yp, yp + C, max ? kLowest : 0.f);
        for_each_tap(g, oh, ow, [&](int64_t ih, int64_t iw) {
          const float* xp = xn + (ih * g.W + iw) * C;
          if (max)
            for (int64_t c = 0; c < C; ++c) yp[c] = std::max(yp[c], xp[c]);
          else
            for (int64_t c = 0; c < C; ++c) yp[c] += xp[c];
        });
        if (!max) {
          const float cnt = rows[oh] * cols[ow];  // 0 only for a window outside X: 0/0, as the reference
          for (int64_t c = 0; c < C; ++c) yp[c] /= cnt;
        }
      }
    }
  });
}

}  // namespace fusor
