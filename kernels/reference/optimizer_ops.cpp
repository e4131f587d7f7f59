// Training optimizer updates of the ai.onnx.preview.training domain: Adagrad, Momentum
// (standard / nesterov) and Adam. Inputs R (learning rate), T (update count), then the tensors
// X..., G..., and the state tensors; outputs the new X... and new state, as the ONNX spec writes
// the formulas (computed in double, stored in the tensor's type).
#include <cmath>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class Optim { Adagrad, Momentum, Adam };

template <Optim K>
class OptimizerKernel : public Kernel {
 public:
  explicit OptimizerKernel(const KernelInfo& info) {
    const Node& n = info.n();
    norm_ = n.attr_float("norm_coefficient", 0.0f);
    if constexpr (K == Optim::Adagrad) {
      decay_ = n.attr_float("decay_factor", 0.0f);
      eps_ = n.attr_float("epsilon", 0.0f);
    } else if constexpr (K == Optim::Momentum) {
      alpha_ = n.attr_float("alpha", 0.0f);
      beta_ = n.attr_float("beta", 0.0f);
      std::string m = n.attr_string("mode", "standard");
      if (m != "standard" && m != "nesterov") throw_bad_input(info.where() + ": unknown mode '" + m + "'");
      nesterov_ = m == "nesterov";
    } else {
      alpha_ = n.attr_float("alpha", 0.9f);
      beta_ = n.attr_float("beta", 0.999f);
      eps_ = n.attr_float("epsilon", 1e-6f);
      norm_post_ = n.attr_float("norm_coefficient_post", 0.0f);
    }
  }
  void compute(KernelContext& ctx) override {
    const std::string w = ctx.where();
    constexpr int groups = K == Optim::Adam ? 4 : 3;  // X, G, state...
    const int tensors = ctx.num_inputs() - 2;
    if (tensors <= 0 || tensors % groups) throw_bad_input(w + ": wrong number of inputs");
    const int m = tensors / groups;
    const Tensor& r_in = required_input(ctx, 0);
    const Tensor& t_in = required_input(ctx, 1);
    if (r_in.numel() != 1 || t_in.numel() != 1) throw_bad_input(w + ": R and T must hold one value each");
    const double R = r_in.as_double(0);
    const int64_t T = t_in.as_int64(0);
    for (int j = 0; j < m; ++j) {
      const Tensor& X = required_input(ctx, 2 + j);
      const Tensor& G = required_input(ctx, 2 + m + j);
      const Tensor& S1 = required_input(ctx, 2 + 2 * m + j);
      const Tensor* S2 = K == Optim::Adam ? &required_input(ctx, 2 + 3 * m + j) : nullptr;
      if (G.shape() != X.shape() || S1.shape() != X.shape() || (S2 && S2->shape() != X.shape()))
        throw_bad_input(w + ": X, G and state shapes differ");
      if (G.dtype() != X.dtype() || S1.dtype() != X.dtype() || (S2 && S2->dtype() != X.dtype()))
        throw_bad_input(w + ": X, G and state element types differ");
      Tensor& Xn = ctx.output(j, X.shape(), X.dtype());
      Tensor& S1n = ctx.output(m + j, X.shape(), X.dtype());
      Tensor* S2n = S2 ? &ctx.output(2 * m + j, X.shape(), X.dtype()) : nullptr;
      dispatch_float(X.dtype(), w, [&](auto tag) {
        using V = typename decltype(tag)::type;
        for (int64_t i = 0; i < X.numel(); ++i) {
          const double x = X.data<V>()[i], g = norm_ * x + G.data<V>()[i], s1 = S1.data<V>()[i];
          if constexpr (K == Optim::Adagrad) {
            const double r = R / (1 + static_cast<double>(T) * decay_);
            const double h = s1 + g * g;
            Xn.data<V>()[i] = static_cast<V>(x - r * g / (std::sqrt(h) + eps_));
            S1n.data<V>()[i] = static_cast<V>(h);
          } else if constexpr (K == Optim::Momentum) {
            const double b = T > 0 ? beta_ : 1.0;
            const double v = alpha_ * s1 + b * g;
            Xn.data<V>()[i] = static_cast<V>(nesterov_ ? x - R * (g + alpha_ * v) : x - R * v);
            S1n.data<V>()[i] = static_cast<V>(v);
          } else {
            const double s2 = S2->data<V>()[i];
            const double v = alpha_ * s1 + (1 - alpha_) * g;
            const double h = beta_ * s2 + (1 - beta_) * g * g;
            const double ra = T > 0 ? R * std::sqrt(1 - std::pow(beta_, static_cast<double>(T))) /
                                          (1 - std::pow(alpha_, static_cast<double>(T)))
                                    : R;
            Xn.data<V>()[i] = static_cast<V>((1 - norm_post_) * (x - ra * v / (std::sqrt(h) + eps_)));
            S1n.data<V>()[i] = static_cast<V>(v);
            S2n->data<V>()[i] = static_cast<V>(h);
          }
        }
      });
    }
  }

 private:
  double norm_ = 0, decay_ = 0, eps_ = 0, alpha_ = 0, beta_ = 0, norm_post_ = 0;
  bool nesterov_ = false;
};

template <class K>
void add_training(KernelRegistry& r, const char* op) {
  r.add("ai.onnx.preview.training", op, "reference", 0,
        [](const KernelInfo& info) -> std::unique_ptr<Kernel> { return std::make_unique<K>(info); });
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& r) {
  add_training<OptimizerKernel<Optim::Adagrad>>(r, "Adagrad");
  add_training<OptimizerKernel<Optim::Momentum>>(r, "Momentum");
  add_training<OptimizerKernel<Optim::Adam>>(r, "Adam");
}

}  // namespace fusor
