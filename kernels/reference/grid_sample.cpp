// GridSample (opset 16) reference kernel, 4-D: X (N, C, H, W) sampled at grid (N, Ho, Wo, 2) of
// normalized (x, y) in [-1, 1]. Modes bilinear / nearest (round half to even) / bicubic
// (A = -0.75); padding zeros / border / reflection. Out-of-range coordinates are first clamped
// (border) or reflected (reflection) into [x_min, x_max], which is [0, W-1] with align_corners
// and [-0.5, W-0.5] without; each fetched pixel is then padded the same way.
#include <cmath>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class GsMode { Bilinear, Nearest, Bicubic };
enum class GsPad { Zeros, Border, Reflection };

double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double d = lo - x;
    const int64_t n = static_cast<int64_t>(d / range);
    const double r = d - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double d = x - hi;
    const int64_t n = static_cast<int64_t>(d / range);
    const double r = d - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

class GridSampleKernel : public Kernel {
 public:
  explicit GridSampleKernel(const KernelInfo& info) : align_(info.n().attr_int("align_corners", 0) != 0) {
    std::string m = info.n().attr_string("mode", "bilinear");
    if (m == "bilinear" || m == "linear") mode_ = GsMode::Bilinear;
    else if (m == "nearest") mode_ = GsMode::Nearest;
    else if (m == "bicubic" || m == "cubic") mode_ = GsMode::Bicubic;
    else throw_bad_input(info.where() + ": unknown mode '" + m + "'");
    std::string p = info.n().attr_string("padding_mode", "zeros");
    if (p == "zeros") pad_ = GsPad::Zeros;
    else if (p == "border") pad_ = GsPad::Border;
    else if (p == "reflection") pad_ = GsPad::Reflection;
    else throw_bad_input(info.where() + ": unknown padding_mode '" + p + "'");
  }

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const Tensor& grid = required_input(ctx, 1);
    const std::string w = ctx.where();
    if (x.rank() != 4 || grid.rank() != 4 || grid.dim(0) != x.dim(0) || grid.dim(3) != 2)
      throw_bad_input(w + ": X must be (N, C, H, W) and grid (N, Ho, Wo, 2)");
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), Ho = grid.dim(1), Wo = grid.dim(2);
    Tensor& y = ctx.output(0, {N, C, Ho, Wo}, x.dtype());
    const double xmin = align_ ? 0 : -0.5, xmax = align_ ? static_cast<double>(W - 1) : static_cast<double>(W) - 0.5;
    const double ymin = align_ ? 0 : -0.5, ymax = align_ ? static_cast<double>(H - 1) : static_cast<double>(H) - 0.5;
    dispatch_float(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = px + (n * C + c) * H * W;
          auto pixel = [&](int64_t r, int64_t col) -> double {
            if (pad_ == GsPad::Zeros) {
              if (r < 0 || r >= H || col < 0 || col >= W) return 0.0;
            } else if (pad_ == GsPad::Border) {
              r = std::clamp<int64_t>(r, 0, H - 1);
              col = std::clamp<int64_t>(col, 0, W - 1);
            } else {
              col = static_cast<int64_t>(reflect(static_cast<double>(col), xmin, xmax));
              r = static_cast<int64_t>(reflect(static_cast<double>(r), ymin, ymax));
              r = std::clamp<int64_t>(r, 0, H - 1);
              col = std::clamp<int64_t>(col, 0, W - 1);
            }
            return static_cast<double>(plane[r * W + col]);
          };
          for (int64_t i = 0; i < Ho; ++i)
            for (int64_t j = 0; j < Wo; ++j) {
              const int64_t g = ((n * Ho + i) * Wo + j) * 2;
              double gx = grid.as_double(g), gy = grid.as_double(g + 1);
              double sx = align_ ? (gx + 1) / 2 * static_cast<double>(W - 1) : ((gx + 1) * static_cast<double>(W) - 1) / 2;
              double sy = align_ ? (gy + 1) / 2 * static_cast<double>(H - 1) : ((gy + 1) * static_cast<double>(H) - 1) / 2;
              if (mode_ == GsMode::Nearest) {
                sx = std::nearbyint(sx);
                sy = std::nearbyint(sy);
              }
              if (sx < xmin || sx > xmax || sy < ymin || sy > ymax) {
                if (pad_ == GsPad::Border) {
                  sx = std::clamp(sx, 0.0, static_cast<double>(W - 1));
                  sy = std::clamp(sy, 0.0, static_cast<double>(H - 1));
                } else if (pad_ == GsPad::Reflection) {
                  sx = reflect(sx, xmin, xmax);
                  sy = reflect(sy, ymin, ymax);
                }
              }
              double v;
              if (mode_ == GsMode::Nearest) {
                v = pixel(static_cast<int64_t>(sy), static_cast<int64_t>(sx));
              } else if (mode_ == GsMode::Bilinear) {
                const double x0 = std::floor(sx), y0 = std::floor(sy), dx = sx - x0, dy = sy - y0;
                const int64_t c0 = static_cast<int64_t>(x0), r0 = static_cast<int64_t>(y0);
                v = (1 - dy) * ((1 - dx) * pixel(r0, c0) + dx * pixel(r0, c0 + 1)) +
                    dy * ((1 - dx) * pixel(r0 + 1, c0) + dx * pixel(r0 + 1, c0 + 1));
              } else {
                const double x0 = std::floor(sx) - 1, y0 = std::floor(sy) - 1;
                double wx[4], wy[4];
                cubic_weights(sx - x0 - 1, wx);
                cubic_weights(sy - y0 - 1, wy);
                v = 0;
                for (int a = 0; a < 4; ++a) {
                  double row = 0;
                  for (int b = 0; b < 4; ++b)
                    row += wx[b] * pixel(static_cast<int64_t>(y0) + a, static_cast<int64_t>(x0) + b);
                  v += wy[a] * row;
                }
              }
              py[((n * C + c) * Ho + i) * Wo + j] = static_cast<T>(v);
            }
        }
    });
  }

 private:
  // Weights of the 4 taps at offsets -1, 0, 1, 2 for a fractional position t in [0, 1).
  static void cubic_weights(double t, double* wt) {
    const double A = -0.75;
    auto far = [A](double s) { return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A; };
    auto near = [A](double s) { return ((A + 2) * s - (A + 3)) * s * s + 1; };
    wt[0] = far(t + 1);
    wt[1] = near(t);
    wt[2] = near(1 - t);
    wt[3] = far(2 - t);
  }

  bool align_;
  GsMode mode_ = GsMode::Bilinear;
  GsPad pad_ = GsPad::Zeros;
};

}  // namespace

void register_grid_sample_kernels(KernelRegistry& r) { add_reference_kernel<GridSampleKernel>(r, "GridSample"); }

}  // namespace fusor
