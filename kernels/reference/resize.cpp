// Resize (opsets 10-17) and Upsample (7-9) reference kernels, separable N-d interpolation that
// follows ONNX's reference implementation:
// - each output coordinate maps back to x_ori by coordinate_transformation_mode;
// - nearest picks one input index by nearest_mode, linear 2 and cubic 4 neighbours with weights;
// - neighbours outside the input read the edge value (exclude_outside=1 drops them instead and
//   renormalizes), and tf_crop_and_resize writes extrapolation_value when x_ori leaves the input.
// Upsample and Resize-10 are asymmetric, with nearest rounding down.
#include <cmath>
#include <limits>
#include <algorithm>

#include "kernels/common/axes.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"
#include "kernels/thread_pool.h"

namespace fusor {
namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class Coord { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNN, TfCropAndResize };
enum class Round { PreferFloor, PreferCeil, Floor, Ceil };

struct Contribution {
  int64_t index;
  double weight;
};

class ResizeKernel : public Kernel {
 public:
  ResizeKernel(const KernelInfo& info, bool upsample) {
    const Node& n = info.n();
    const std::string w = info.where();
    std::string mode = n.attr_string("mode", "nearest");
    if (mode == "nearest") mode_ = Mode::Nearest;
    else if (mode == "linear" || mode == "bilinear") mode_ = Mode::Linear;
    else if (mode == "cubic") mode_ = Mode::Cubic;
    else throw_bad_input(w + ": unknown mode '" + mode + "'");
    legacy_ = upsample || (info.opset > 0 && info.opset < 11);
    if (legacy_) {
      coord_ = Coord::Asymmetric;
      round_ = Round::Floor;
      scales_input_ = upsample ? (info.opset == 0 || info.opset >= 9 ? 1 : -1) : 1;
      if (scales_input_ < 0) attr_scales_ = n.attr_floats("scales");
      return;
    }
    scales_input_ = 2;
    std::string c = n.attr_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel") coord_ = Coord::HalfPixel;
    else if (c == "pytorch_half_pixel") coord_ = Coord::PytorchHalfPixel;
    else if (c == "align_corners") coord_ = Coord::AlignCorners;
    else if (c == "asymmetric") coord_ = Coord::Asymmetric;
    else if (c == "tf_half_pixel_for_nn") coord_ = Coord::TfHalfPixelForNN;
    else if (c == "tf_crop_and_resize") coord_ = Coord::TfCropAndResize;
    else throw_bad_input(w + ": unknown coordinate_transformation_mode '" + c + "'");
    std::string r = n.attr_string("nearest_mode", "round_prefer_floor");
    if (r == "round_prefer_floor") round_ = Round::PreferFloor;
    else if (r == "round_prefer_ceil") round_ = Round::PreferCeil;
    else if (r == "floor") round_ = Round::Floor;
    else if (r == "ceil") round_ = Round::Ceil;
    else throw_bad_input(w + ": unknown nearest_mode '" + r + "'");
    // Opset 18+ features: refuse them rather than resize differently than asked.
    if (n.attr_int("antialias", 0) != 0 || n.attr("axes") ||
        n.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
      throw_bad_input(w + ": antialias, axes and keep_aspect_ratio_policy (opset 18) are not supported");
    cubic_a_ = n.attr_float("cubic_coeff_a", -0.75f);
    exclude_outside_ = n.attr_int("exclude_outside", 0) != 0;
    extrapolation_ = n.attr_float("extrapolation_value", 0.0f);
  }

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    const int rank = x.rank();
    std::vector<double> scales;
    Shape out(rank);
    std::vector<double> roi;
    if (scales_input_ < 0) {
      scales.assign(attr_scales_.begin(), attr_scales_.end());
    } else {
      const Tensor* s = optional_input(ctx, scales_input_);
      if (s && s->numel() > 0) {
        for (int64_t i = 0; i < s->numel(); ++i) scales.push_back(static_cast<float>(s->as_double(i)));
      }
    }
    if (!legacy_) {
      if (const Tensor* r = optional_input(ctx, 1))
        for (int64_t i = 0; i < r->numel(); ++i) roi.push_back(r->as_double(i));
      const Tensor* sz = optional_input(ctx, 3);
      if (scales.empty()) {
        if (!sz) throw_bad_input(w + ": needs scales or sizes");
        std::vector<int64_t> sizes = int_list_input(*sz, w, "sizes");
        if (static_cast<int>(sizes.size()) != rank) throw_bad_input(w + ": sizes length does not match the input rank");
        for (int d = 0; d < rank; ++d) {
          out[d] = sizes[d];
          scales.push_back(x.dim(d) ? static_cast<double>(static_cast<float>(sizes[d]) / static_cast<float>(x.dim(d))) : 1.0);
        }
      } else if (sz && sz->numel() > 0) {
        throw_bad_input(w + ": only one of scales and sizes may be given");
      }
    }
    if (static_cast<int>(scales.size()) != rank) throw_bad_input(w + ": scales length does not match the input rank");
    bool from_sizes = !legacy_ && optional_input(ctx, 3) && optional_input(ctx, 3)->numel() > 0;
    for (int d = 0; d < rank; ++d) {
      if (!(scales[d] > 0) || !std::isfinite(scales[d])) throw_bad_input(w + ": scales must be positive and finite");
      if (!from_sizes) out[d] = static_cast<int64_t>(std::floor(static_cast<double>(x.dim(d)) * scales[d] + 1e-9));
    }
    if (coord_ == Coord::TfCropAndResize && static_cast<int>(roi.size()) != 2 * rank)
      throw_bad_input(w + ": tf_crop_and_resize needs roi with 2 * rank values");

    // Per dim, per output coordinate: the input neighbours and weights (edge-clamped), or
    // outside=true when tf_crop_and_resize extrapolates.
    std::vector<std::vector<std::vector<Contribution>>> contrib(rank);
    std::vector<std::vector<char>> outside(rank);
    std::vector<bool> identity(rank, true);
    for (int d = 0; d < rank; ++d) {
      contrib[d].resize(out[d]);
      outside[d].assign(out[d], 0);
      identity[d] = out[d] == x.dim(d);
      for (int64_t o = 0; o < out[d]; ++o) {
        bool ext = false;
        contrib[d][o] = neighbours(o, x.dim(d), scales[d], roi.empty() ? 0 : roi[d], roi.empty() ? 1 : roi[d + rank], &ext);
        outside[d][o] = ext;
        identity[d] = identity[d] && !ext && contrib[d][o].size() == 1 && contrib[d][o][0].index == o &&
                      contrib[d][o][0].weight == 1.0;
      }
    }
    Tensor& y = ctx.output(0, out, x.dtype());
    dispatch_numeric(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      const int64_t n = y.numel();
      if (mode_ == Mode::Nearest && coord_ != Coord::TfCropAndResize) {
        // Each output element copies one input element. Trailing dims that are not resized (the
        // 16 lanes of a blocked tensor, or more) are copied as whole runs; the dims before them
        // walk per-dim source offsets computed once. Rows of the outermost dims go to threads.
        if (n == 0) return;
        const std::vector<int64_t> st = row_major_strides(x.shape());
        const T* px = x.data<T>();
        int r = rank;  // dims [r, rank) are identity
        while (r > 0 && identity[r - 1]) --r;
        const int64_t run = rank ? dims_product(out, r, rank) : 1;
        std::vector<std::vector<int64_t>> src(r);
        for (int d = 0; d < r; ++d) {
          src[d].resize(out[d]);
          for (int64_t o = 0; o < out[d]; ++o) src[d][o] = contrib[d][o][0].index * st[d];
        }
        if (r == 0) {
          std::copy(px, px + n, py);
          return;
        }
        // Rows: one per index of dims [0, r - 1); each row is out[r - 1] runs.
        const int64_t rows = dims_product(out, 0, r - 1), row_len = out[r - 1] * run;
        const std::vector<int64_t>& last = src[r - 1];
        auto body = [&](int64_t r0, int64_t r1) {
          std::vector<int64_t> counter(r, 0);
          int64_t rem = r0;
          for (int d = r - 2; d >= 0; --d) counter[d] = rem % out[d], rem /= out[d];
          for (int64_t row = r0; row < r1; ++row) {
            int64_t base = 0;
            for (int d = 0; d < r - 1; ++d) base += src[d][counter[d]];
            T* dst = py + row * row_len;
            if (run == 1) {
              for (int64_t j = 0; j < out[r - 1]; ++j) dst[j] = px[base + last[j]];
            } else {
              for (int64_t j = 0; j < out[r - 1]; ++j) std::copy(px + base + last[j], px + base + last[j] + run, dst + j * run);
            }
            for (int d = r - 2; d >= 0; --d) {
              if (++counter[d] < out[d]) break;
              counter[d] = 0;
            }
          }
        };
        return ctx.threads().parallel_for_cost(rows, 0.25 * static_cast<double>(row_len), body);
      }
      // Separable: one 1-D pass per resized dim over double intermediates in scratch memory.
      Shape cur = x.shape();
      double* buf = static_cast<double*>(ctx.scratch(static_cast<size_t>(std::max<int64_t>(x.numel(), 1)) * sizeof(double)));
      const T* px = x.data<T>();
      const int64_t in_n = x.numel();
      for (int64_t i = 0; i < in_n; ++i) buf[i] = static_cast<double>(px[i]);
      for (int d = 0; d < rank; ++d) {
        if (identity[d]) continue;
        const int64_t outer = dims_product(cur, 0, d), inner = dims_product(cur, d + 1, rank), in_len = cur[d];
        cur[d] = out[d];
        double* next = static_cast<double*>(ctx.scratch(static_cast<size_t>(std::max<int64_t>(shape_numel(cur), 1)) * sizeof(double)));
        if (inner == 1) {  // the innermost dim: one sum per output element
          for (int64_t o = 0; o < outer; ++o) {
            const double* src = buf + o * in_len;
            double* dst = next + o * out[d];
            for (int64_t j = 0; j < out[d]; ++j) {
              double acc = 0;
              for (const Contribution& c : contrib[d][j]) acc += c.weight * src[c.index];
              dst[j] = acc;
            }
          }
          buf = next;
          continue;
        }
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < out[d]; ++j) {
            double* dst = next + (o * out[d] + j) * inner;
            std::fill(dst, dst + inner, 0.0);
            for (const Contribution& c : contrib[d][j]) {
              const double* src = buf + (o * in_len + c.index) * inner;
              for (int64_t i = 0; i < inner; ++i) dst[i] += c.weight * src[i];
            }
          }
        buf = next;
      }
      for (int64_t i = 0; i < n; ++i) {
        double v = buf[i];
        if constexpr (std::is_integral_v<T>)  // round, and saturate cubic overshoot
          v = std::clamp(std::nearbyint(v), static_cast<double>(std::numeric_limits<T>::lowest()),
                         static_cast<double>(std::numeric_limits<T>::max()));
        py[i] = static_cast<T>(v);
      }
      if (coord_ == Coord::TfCropAndResize) {
        std::vector<int64_t> counter(rank, 0);
        for (int64_t i = 0; i < n; ++i) {
          bool ext = false;
          for (int d = 0; d < rank; ++d) ext = ext || outside[d][counter[d]];
          if (ext) py[i] = static_cast<T>(extrapolation_);
          for (int d = rank - 1; d >= 0; --d) {
            if (++counter[d] < out[d]) break;
            counter[d] = 0;
          }
        }
      }
    });
  }

 private:
  double original_coordinate(int64_t o, int64_t in_len, double scale, double roi_lo, double roi_hi) const {
    const double out_len = scale * static_cast<double>(in_len);  // ONNX's reference uses the real-valued size
    const double x = static_cast<double>(o);
    switch (coord_) {
      case Coord::HalfPixel: return (x + 0.5) / scale - 0.5;
      case Coord::PytorchHalfPixel: return out_len > 1 ? (x + 0.5) / scale - 0.5 : -0.5;
      case Coord::AlignCorners: return out_len == 1 ? 0.0 : x * static_cast<double>(in_len - 1) / (out_len - 1);
      case Coord::Asymmetric: return x / scale;
      case Coord::TfHalfPixelForNN: return (x + 0.5) / scale;
      case Coord::TfCropAndResize:
        if (out_len == 1) return (roi_hi - roi_lo) * static_cast<double>(in_len - 1) / 2;
        return roi_lo * static_cast<double>(in_len - 1) + x * (roi_hi - roi_lo) * static_cast<double>(in_len - 1) / (out_len - 1);
    }
    return x;
  }

  std::vector<Contribution> neighbours(int64_t o, int64_t in_len, double scale, double roi_lo, double roi_hi, bool* ext) const {
    const double xo = original_coordinate(o, in_len, scale, roi_lo, roi_hi);
    if (coord_ == Coord::TfCropAndResize && (xo < 0 || xo > static_cast<double>(in_len - 1))) *ext = true;
    auto clamp = [&](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in_len - 1); };
    const double fl = std::floor(xo);
    const bool integral = fl == xo;
    // ratio in (0, 1]: the left neighbour is base, the right base + 1.
    const int64_t base = integral ? static_cast<int64_t>(xo) - 1 : static_cast<int64_t>(fl);
    const double ratio = integral ? 1.0 : xo - fl;
    std::vector<Contribution> out;
    if (mode_ == Mode::Nearest) {
      bool right;
      if (integral) right = true;
      else if (round_ == Round::PreferFloor) right = ratio > 0.5;
      else if (round_ == Round::PreferCeil) right = ratio >= 0.5;
      else right = round_ == Round::Ceil;
      out.push_back({clamp(right ? base + 1 : base), 1.0});
      return out;
    }
    std::vector<int64_t> idx;
    std::vector<double> wts;
    if (mode_ == Mode::Linear) {
      idx = {base, base + 1};
      wts = {1 - ratio, ratio};
    } else {
      const double A = cubic_a_;
      auto far = [A](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };   // 1 <= t < 2
      auto near = [A](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };       // 0 <= t < 1
      idx = {base - 1, base, base + 1, base + 2};
      wts = {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
    }
    if (exclude_outside_) {
      double total = 0;
      for (size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= in_len) wts[i] = 0;
        total += wts[i];
      }
      if (total != 0)
        for (double& v : wts) v /= total;
    }
    for (size_t i = 0; i < idx.size(); ++i)
      if (wts[i] != 0) out.push_back({clamp(idx[i]), wts[i]});
    return out;
  }

  Mode mode_ = Mode::Nearest;
  Coord coord_ = Coord::HalfPixel;
  Round round_ = Round::PreferFloor;
  bool legacy_ = false;
  int scales_input_ = 2;  // -1: the `scales` attribute (Upsample-7)
  std::vector<float> attr_scales_;
  double cubic_a_ = -0.75;
  bool exclude_outside_ = false;
  double extrapolation_ = 0;
};

}  // namespace

void register_resize_kernels(KernelRegistry& r) {
  r.add("", "Resize", "reference", 0, [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<ResizeKernel>(i, false); });
  r.add("", "Upsample", "reference", 0, [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<ResizeKernel>(i, true); });
}

}  // namespace fusor
