// Reference MaxUnpool and RoiAlign.
#include <algorithm>
#include <cmath>

#include "kernels/common/conv_params.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/nn_families.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

// MaxUnpool: Y is zeros except at the positions I names, which receive X. The natural shape is
// (N, C, (in - 1) * stride + kernel - pad_begin - pad_end ...); output_shape may enlarge it.
class MaxUnpoolKernel : public Kernel {
 public:
  explicit MaxUnpoolKernel(const KernelInfo& info) : attrs_(WindowAttrs::parse(info.n(), WindowKind::Pool)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& idx = required_input(ctx, 1);
    const Tensor* shape_in = optional_input(ctx, 2);
    if (idx.shape() != x.shape())
      throw_bad_input(attrs_.where + ": indices of shape " + shape_str(idx.shape()) + " differ from X's " + shape_str(x.shape()));
    // Indices address the natural unpooled shape; a larger output_shape keeps each element's
    // coordinates (the extra rows and columns are zero at the end of each axis), as ONNX Runtime
    // and the backend tests do.
    const ConvParams p = pool_params_unchecked(x.shape());
    Shape natural{x.dim(0), x.dim(1)};
    for (int d = 0; d < p.nd; ++d) natural.push_back((p.in[d] - 1) * p.strides[d] + p.kernel[d] - p.pad_begin[d] - p.pad_end[d]);
    Shape out = natural;
    if (shape_in) {
      out = int_list_input(*shape_in, attrs_.where, "output_shape");
      if (out.size() != natural.size() || out[0] != natural[0] || out[1] != natural[1])
        throw_bad_input(attrs_.where + ": output_shape " + shape_str(out) + " does not match X's batch and channels");
      for (size_t d = 2; d < out.size(); ++d)
        if (out[d] < natural[d])
          throw_bad_input(attrs_.where + ": output_shape " + shape_str(out) + " is smaller than the unpooled shape " + shape_str(natural));
    }
    Tensor& y = ctx.output(0, out, x.dtype());
    const int64_t total = y.numel();
    dispatch_numeric(x.dtype(), attrs_.where, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      std::fill(py, py + total, T(0));
      for (int64_t i = 0; i < x.numel(); ++i) {
        int64_t at = idx.as_int64(i);
        if (at < 0 || at >= shape_numel(natural))
          throw_bad_input(attrs_.where + ": index " + std::to_string(at) + " is outside the unpooled tensor " + shape_str(natural));
        if (out != natural) {
          int64_t re = 0, stride = 1;
          for (int d = static_cast<int>(natural.size()) - 1; d >= 0; --d) {
            re += (at % natural[d]) * stride;
            at /= natural[d];
            stride *= out[d];
          }
          at = re;
        }
        py[at] = x.data<T>()[i];
      }
    });
  }

 private:
  // Strides, pads and kernel per axis without the pooled-output-size checks.
  ConvParams pool_params_unchecked(const Shape& x) const {
    if (x.size() < 3) throw_bad_input(attrs_.where + ": X must have rank >= 3, got " + shape_str(x));
    ConvParams p;
    p.nd = static_cast<int>(x.size()) - 2;
    if (static_cast<int>(attrs_.kernel_shape.size()) != p.nd) throw_bad_input(attrs_.where + ": kernel_shape rank differs from X's");
    p.in.assign(x.begin() + 2, x.end());
    p.kernel = attrs_.kernel_shape;
    p.strides = attrs_.strides.empty() ? Shape(p.nd, 1) : attrs_.strides;
    p.pad_begin.assign(p.nd, 0);
    p.pad_end.assign(p.nd, 0);
    if (!attrs_.pads.empty()) {
      if (static_cast<int>(attrs_.pads.size()) != 2 * p.nd) throw_bad_input(attrs_.where + ": pads has the wrong length");
      for (int d = 0; d < p.nd; ++d) {
        p.pad_begin[d] = attrs_.pads[d];
        p.pad_end[d] = attrs_.pads[p.nd + d];
      }
    }
    if (static_cast<int>(p.strides.size()) != p.nd) throw_bad_input(attrs_.where + ": strides has the wrong length");
    return p;
  }

  WindowAttrs attrs_;
};

// RoiAlign (opsets 10 and 16). Each output bin averages (or takes the max of) a grid of
// bilinearly interpolated samples, following the ONNX specification / reference implementation:
// samples outside [-1, size] contribute zero, coordinates below 0 clamp to 0, and in max mode
// each sample's value is the largest of its four weighted corner terms.
class RoiAlignKernel : public Kernel {
 public:
  explicit RoiAlignKernel(const KernelInfo& info) : where_(info.where()) {
    const Node& n = info.n();
    max_mode_ = n.attr_string("mode", "avg") == "max";
    if (!max_mode_ && n.attr_string("mode", "avg") != "avg") throw_bad_input(where_ + ": mode must be avg or max");
    out_h_ = n.attr_int("output_height", 1);
    out_w_ = n.attr_int("output_width", 1);
    sampling_ratio_ = n.attr_int("sampling_ratio", 0);
    spatial_scale_ = n.attr_float("spatial_scale", 1.0f);
    // Opset 10 has no attribute and behaves as "output_half_pixel"; opset 16 defaults to half_pixel.
    const std::string mode = n.attr_string("coordinate_transformation_mode", info.opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (mode != "half_pixel" && mode != "output_half_pixel")
      throw_bad_input(where_ + ": unknown coordinate_transformation_mode '" + mode + "'");
    half_pixel_ = mode == "half_pixel";
    if (out_h_ <= 0 || out_w_ <= 0) throw_bad_input(where_ + ": output_height and output_width must be positive");
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& rois = required_input(ctx, 1);
    const Tensor& bidx = required_input(ctx, 2);
    if (x.rank() != 4) throw_bad_input(where_ + ": X must be 4-D, got " + shape_str(x.shape()));
    if (rois.rank() != 2 || rois.dim(1) != 4) throw_bad_input(where_ + ": rois must be [num_rois, 4], got " + shape_str(rois.shape()));
    const int64_t R = rois.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    if (bidx.numel() != R) throw_bad_input(where_ + ": batch_indices must have one value per roi");
    Tensor& y = ctx.output(0, {R, C, out_h_, out_w_}, x.dtype());
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t r = 0; r < R; ++r) {
        const int64_t b = bidx.as_int64(r);
        if (b < 0 || b >= x.dim(0)) throw_bad_input(where_ + ": batch index " + std::to_string(b) + " out of range");
        const double off = half_pixel_ ? 0.5 : 0.0;
        const double x0 = rois.as_double(r * 4 + 0) * spatial_scale_ - off, y0 = rois.as_double(r * 4 + 1) * spatial_scale_ - off;
        const double x1 = rois.as_double(r * 4 + 2) * spatial_scale_ - off, y1 = rois.as_double(r * 4 + 3) * spatial_scale_ - off;
        double rw = x1 - x0, rh = y1 - y0;
        if (!half_pixel_) {
          rw = std::max(rw, 1.0);
          rh = std::max(rh, 1.0);
        }
        const double bin_h = rh / static_cast<double>(out_h_), bin_w = rw / static_cast<double>(out_w_);
        const int64_t grid_h = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rh / static_cast<double>(out_h_)));
        const int64_t grid_w = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(rw / static_cast<double>(out_w_)));
        const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = px + (b * C + c) * H * W;
          for (int64_t ph = 0; ph < out_h_; ++ph)
            for (int64_t pw = 0; pw < out_w_; ++pw) {
              double acc = 0;
              bool first = true;
              for (int64_t iy = 0; iy < grid_h; ++iy)
                for (int64_t ix = 0; ix < grid_w; ++ix) {
                  const double sy = y0 + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(grid_h);
                  const double sx = x0 + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(grid_w);
                  const double v = sample(plane, H, W, sy, sx);
                  if (!max_mode_) acc += v;
                  else if (first || v > acc) acc = v;
                  first = false;
                }
              py[((r * C + c) * out_h_ + ph) * out_w_ + pw] = static_cast<T>(max_mode_ ? acc : acc / count);
            }
        }
      }
    });
  }

 private:
  // Bilinear sample (avg mode) or largest weighted corner (max mode) at (y, x).
  template <typename T>
  double sample(const T* plane, int64_t H, int64_t W, double y, double x) const {
    if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W)) return 0.0;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh, xh;
    if (yl >= H - 1) { yl = yh = H - 1; y = static_cast<double>(yl); } else { yh = yl + 1; }
    if (xl >= W - 1) { xl = xh = W - 1; x = static_cast<double>(xl); } else { xh = xl + 1; }
    const double ly = y - yl, lx = x - xl, hy = 1 - ly, hx = 1 - lx;
    const double t1 = hy * hx * plane[yl * W + xl], t2 = hy * lx * plane[yl * W + xh];
    const double t3 = ly * hx * plane[yh * W + xl], t4 = ly * lx * plane[yh * W + xh];
    if (max_mode_) return std::max(std::max(t1, t2), std::max(t3, t4));
    return t1 + t2 + t3 + t4;
  }

  std::string where_;
  bool max_mode_ = false, half_pixel_ = true;
  int64_t out_h_ = 1, out_w_ = 1, sampling_ratio_ = 0;
  float spatial_scale_ = 1.0f;
};

}  // namespace

void register_nn_unpool_roialign_kernels(KernelRegistry& r) {
  add_reference_kernel<MaxUnpoolKernel>(r, "MaxUnpool");
  add_reference_kernel<RoiAlignKernel>(r, "RoiAlign");
}

}  // namespace fusor
