// Loss reference kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which is
// log-softmax over axis 1 followed by the NLL loss). Input (N, C, d1...), target (N, d1...),
// optional per-class weight; reduction none / sum / mean (mean divides by the summed weights of
// the targets that are not ignore_index).
#include <cmath>
#include <limits>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class LossReduction { None, Sum, Mean };

LossReduction parse_loss_reduction(const KernelInfo& info) {
  std::string s = info.n().attr_string("reduction", "mean");
  if (s == "none") return LossReduction::None;
  if (s == "sum") return LossReduction::Sum;
  if (s == "mean") return LossReduction::Mean;
  throw_bad_input(info.where() + ": unknown reduction '" + s + "'");
}

template <bool Softmax>
class LossKernel : public Kernel {
 public:
  explicit LossKernel(const KernelInfo& info)
      : red_(parse_loss_reduction(info)), has_ignore_(info.n().attr("ignore_index") != nullptr),
        ignore_(info.n().attr_int("ignore_index", 0)) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const Tensor& target = required_input(ctx, 1);
    const Tensor* weight = optional_input(ctx, 2);
    const std::string w = ctx.where();
    if (x.rank() < 2) throw_bad_input(w + ": input must be (N, C, ...)");
    const int64_t N = x.dim(0), C = x.dim(1), D = x.numel() / std::max<int64_t>(1, N * C);
    Shape tshape = x.shape();
    tshape.erase(tshape.begin() + 1);
    if (target.shape() != tshape) throw_bad_input(w + ": target shape " + shape_str(target.shape()) + " should be " + shape_str(tshape));
    if (weight && (weight->rank() != 1 || weight->dim(0) != C)) throw_bad_input(w + ": weight must be (C)");
    std::vector<int64_t> t = int_list_input(target, w, "target");
    dispatch_float(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      // Log-probabilities (SoftmaxCrossEntropyLoss) or the input itself (NLL).
      std::vector<double> lp(static_cast<size_t>(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i) lp[i] = static_cast<double>(px[i]);
      if constexpr (Softmax) {
        for (int64_t n = 0; n < N; ++n)
          for (int64_t d = 0; d < D; ++d) {
            double mx = -std::numeric_limits<double>::infinity(), sum = 0;
            for (int64_t c = 0; c < C; ++c) mx = std::max(mx, lp[(n * C + c) * D + d]);
            for (int64_t c = 0; c < C; ++c) sum += std::exp(lp[(n * C + c) * D + d] - mx);
            const double lse = mx + std::log(sum);
            for (int64_t c = 0; c < C; ++c) lp[(n * C + c) * D + d] -= lse;
          }
        if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
          Tensor& out_lp = ctx.output(1, x.shape(), x.dtype());
          for (int64_t i = 0; i < x.numel(); ++i) out_lp.data<T>()[i] = static_cast<T>(lp[i]);
        }
      }
      std::vector<double> loss(static_cast<size_t>(N * D));
      double wsum = 0, lsum = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t d = 0; d < D; ++d) {
          const int64_t cls = t[n * D + d];
          double l = 0, wt = 0;
          if (!(has_ignore_ && cls == ignore_)) {
            if (cls < 0 || cls >= C) throw_bad_input(w + ": target " + std::to_string(cls) + " out of range [0, " + std::to_string(C) + ")");
            wt = weight ? weight->as_double(cls) : 1.0;
            l = -lp[(n * C + cls) * D + d] * wt;
          }
          loss[n * D + d] = l;
          lsum += l;
          wsum += wt;
        }
      if (red_ == LossReduction::None) {
        Tensor& y = ctx.output(0, tshape, x.dtype());
        for (size_t i = 0; i < loss.size(); ++i) y.data<T>()[i] = static_cast<T>(loss[i]);
      } else {
        Tensor& y = ctx.output(0, {}, x.dtype());
        y.data<T>()[0] = static_cast<T>(red_ == LossReduction::Sum ? lsum : (wsum != 0 ? lsum / wsum : 0.0));
      }
    });
  }

 private:
  LossReduction red_;
  bool has_ignore_;
  int64_t ignore_;
};

}  // namespace

void register_loss_kernels(KernelRegistry& r) {
  add_reference_kernel<LossKernel<false>>(r, "NegativeLogLikelihoodLoss");
  add_reference_kernel<LossKernel<true>>(r, "SoftmaxCrossEntropyLoss");
}

}  // namespace fusor
