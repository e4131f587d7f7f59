// View-like reference kernels: the output is the input's buffer with a new shape
// (ctx.output_alias, alias_of(0) == 0). Reshape Flatten Squeeze Unsqueeze Identity Dropout.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/common/axes.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"
#include "kernels/reference/random_stream.h"

namespace fusor {
namespace {

class ViewKernel : public Kernel {
 public:
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    Shape s = out_shape(ctx, x);
    std::optional<int64_t> n = checked_numel(s);
    if (!n) throw_bad_input(ctx.where() + ": shape " + shape_str(s) + " has more elements than a 64-bit count can hold");
    if (*n != x.numel())
      throw_bad_input(ctx.where() + ": cannot view " + shape_str(x.shape()) + " as " + shape_str(s));
    ctx.output_alias(0, 0, s);
  }
  int alias_of(int out) const override { return out == 0 ? 0 : -1; }

 protected:
  virtual Shape out_shape(KernelContext& ctx, const Tensor& x) const = 0;
};

// Reshape: shape is input 1 (opset 5+) or the `shape` attribute (opset 1). 0 copies the input dim
// unless allowzero=1 (opset 14); -1 is inferred.
class ReshapeKernel : public ViewKernel {
 public:
  explicit ReshapeKernel(const KernelInfo& info)
      : allowzero_(info.n().attr_int("allowzero", 0) != 0),
        from_attr_(!node_has_input(info, 1)), attr_shape_(info.n().attr_ints("shape")) {}

 protected:
  Shape out_shape(KernelContext& ctx, const Tensor& x) const override {
    const std::string w = ctx.where();
    std::vector<int64_t> req = from_attr_ ? attr_shape_ : int_list_input(required_input(ctx, 1), w, "shape");
    Shape s(req.size());
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < req.size(); ++i) {
      int64_t d = req[i];
      if (d == 0 && !allowzero_) {
        if (static_cast<int64_t>(i) >= x.rank()) throw_bad_input(w + ": shape has 0 at a dim the input lacks");
        d = x.dim(static_cast<int>(i));
      }
      if (d == -1) {
        if (infer >= 0) throw_bad_input(w + ": shape has more than one -1");
        infer = static_cast<int64_t>(i);
        continue;
      }
      if (d < 0) throw_bad_input(w + ": invalid dim " + std::to_string(d) + " in shape");
      s[i] = d;
      if (__builtin_mul_overflow(known, d, &known))
        throw_bad_input(w + ": shape " + shape_str(s) + " has more elements than a 64-bit count can hold");
    }
    if (infer >= 0) {
      if (known == 0 || x.numel() % known != 0)
        throw_bad_input(w + ": cannot infer -1 reshaping " + shape_str(x.shape()));
      s[infer] = x.numel() / known;
    }
    return s;
  }

 private:
  bool allowzero_, from_attr_;
  std::vector<int64_t> attr_shape_;
};

class FlattenKernel : public ViewKernel {
 public:
  explicit FlattenKernel(const KernelInfo& info) : axis_(info.n().attr_int("axis", 1)) {}

 protected:
  Shape out_shape(KernelContext& ctx, const Tensor& x) const override {
    int64_t a = axis_ < 0 ? axis_ + x.rank() : axis_;
    if (a < 0 || a > x.rank()) throw_bad_input(ctx.where() + ": axis out of range");
    return {dims_product(x.shape(), 0, a), dims_product(x.shape(), a, x.rank())};
  }

 private:
  int64_t axis_;
};

// Squeeze/Unsqueeze: axes attribute before opset 13, input 1 from opset 13.
class SqueezeKernel : public ViewKernel {
 public:
  explicit SqueezeKernel(const KernelInfo& info)
      : from_input_(info.opset == 0 ? node_has_input(info, 1) : info.opset >= 13),
        attr_axes_(info.n().attr_ints("axes")) {}

 protected:
  Shape out_shape(KernelContext& ctx, const Tensor& x) const override {
    const std::string w = ctx.where();
    std::vector<int64_t> axes = attr_axes_;
    if (from_input_)
      if (const Tensor* a = optional_input(ctx, 1)) axes = int_list_input(*a, w, "axes");
    Shape s;
    if (axes.empty()) {
      for (int64_t d : x.shape())
        if (d != 1) s.push_back(d);
      return s;
    }
    std::vector<int64_t> ax = normalize_axes(axes, x.rank(), w);
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (std::binary_search(ax.begin(), ax.end(), d)) {
        if (x.dim(static_cast<int>(d)) != 1) throw_bad_input(w + ": cannot squeeze dim " + std::to_string(d) + " of size " + std::to_string(x.dim(static_cast<int>(d))));
        continue;
      }
      s.push_back(x.dim(static_cast<int>(d)));
    }
    return s;
  }

 private:
  bool from_input_;
  std::vector<int64_t> attr_axes_;
};

class UnsqueezeKernel : public ViewKernel {
 public:
  explicit UnsqueezeKernel(const KernelInfo& info)
      : from_input_(info.opset == 0 ? node_has_input(info, 1) : info.opset >= 13),
        attr_axes_(info.n().attr_ints("axes")) {}

 protected:
  Shape out_shape(KernelContext& ctx, const Tensor& x) const override {
    const std::string w = ctx.where();
    std::vector<int64_t> axes = from_input_ ? int_list_input(required_input(ctx, 1), w, "axes") : attr_axes_;
    const int64_t rank = x.rank() + static_cast<int64_t>(axes.size());
    std::vector<int64_t> ax = normalize_axes(axes, rank, w);
    Shape s;
    size_t src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::binary_search(ax.begin(), ax.end(), d)) s.push_back(1);
      else s.push_back(x.shape()[src++]);
    }
    return s;
  }

 private:
  bool from_input_;
  std::vector<int64_t> attr_axes_;
};

class IdentityKernel : public ViewKernel {
 public:
  explicit IdentityKernel(const KernelInfo&) {}

 protected:
  Shape out_shape(KernelContext&, const Tensor& x) const override { return x.shape(); }
};

// Dropout. At inference (no training_mode input, or it is false, or the ratio is 0): output =
// input, mask (if wanted) all true; the output is a view of the input unless the node has a
// training_mode input, whose value is known only at run time. In training mode each element is
// kept where a uniform draw u (random_stream.h) is >= ratio and scaled by 1 / (1 - ratio); the mask
// says which were kept. The draws are numpy's for the node's seed, so ONNX's own training-mode
// tests (made with np.random.seed(seed)) are reproduced exactly.
class DropoutKernel : public IdentityKernel {
 public:
  explicit DropoutKernel(const KernelInfo& info)
      : IdentityKernel(info), opset_(info.opset),
        training_input_((info.opset == 0 || info.opset >= 12) && node_has_input(info, 2)) {
    if (training_input_) stream_ = std::make_unique<RandomStream>(info.n());
  }
  int alias_of(int out) const override { return out == 0 && !training_input_ ? 0 : -1; }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    double ratio = 0;
    if (training_input_) {
      const Tensor* training = optional_input(ctx, 2);
      if (training && training->numel() != 1)
        throw_bad_input(ctx.where() + ": training_mode must hold one value, not " + shape_str(training->shape()));
      if (training && training->as_double(0) != 0) {
        const Tensor* r = optional_input(ctx, 1);
        if (r && r->numel() != 1) throw_bad_input(ctx.where() + ": ratio must hold one value, not " + shape_str(r->shape()));
        ratio = r ? r->as_double(0) : 0.5;
        if (!(ratio >= 0 && ratio <= 1))
          throw_bad_input(ctx.where() + ": ratio " + std::to_string(ratio) + " is outside [0, 1]");
      }
    }
    if (ratio != 0) return draw(ctx, x, ratio);
    if (training_input_) copy_input(ctx, x);
    else IdentityKernel::compute(ctx);
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      if (opset_ > 0 && opset_ < 10) {  // before opset 10 the mask has the input's type
        Tensor& mask = ctx.output(1, x.shape(), x.dtype());
        dispatch_numeric(x.dtype(), ctx.where(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          std::fill(mask.data<T>(), mask.data<T>() + mask.numel(), T(1));
        });
        return;
      }
      Tensor& mask = ctx.output(1, x.shape(), DataType::Bool);
      std::fill(mask.data<bool>(), mask.data<bool>() + mask.numel(), true);
    }
  }

 private:
  static void copy_input(KernelContext& ctx, const Tensor& x) {
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    if (x.nbytes()) std::memcpy(y.raw(), x.raw(), x.nbytes());
  }

  void draw(KernelContext& ctx, const Tensor& x, double ratio) {
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    bool* mask = ctx.num_outputs() > 1 && ctx.output_wanted(1)
                     ? ctx.output(1, x.shape(), DataType::Bool).data<bool>() : nullptr;
    std::lock_guard<std::mutex> lock(stream_->mutex());
    dispatch_float(x.dtype(), ctx.where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // numpy's reference scales in the input's type: x * T(1 / (1 - ratio)).
      const T scale = static_cast<T>(1.0 / (1.0 - ratio));
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) {
        const bool keep = stream_->uniform() >= ratio;
        py[i] = keep ? px[i] * scale : T(0);
        if (mask) mask[i] = keep;
      }
    });
  }

  int64_t opset_;
  bool training_input_;
  std::unique_ptr<RandomStream> stream_;
};

}  // namespace

void register_view_kernels(KernelRegistry& r) {
  add_reference_kernel<ReshapeKernel>(r, "Reshape");
  add_reference_kernel<FlattenKernel>(r, "Flatten");
  add_reference_kernel<SqueezeKernel>(r, "Squeeze");
  add_reference_kernel<UnsqueezeKernel>(r, "Unsqueeze");
  add_reference_kernel<IdentityKernel>(r, "Identity");
  add_reference_kernel<DropoutKernel>(r, "Dropout");
}

}  // namespace fusor
