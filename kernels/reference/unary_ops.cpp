// Unary elementwise reference kernels: math, activations (attributes parsed at construction),
// Neg/Abs/Sign/Not, IsNaN/IsInf, Clip.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/elementwise_loops.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class Family { Float, Signed, Numeric, Bool };

// Op: a functor constructible from KernelInfo with `template <class T> T operator()(T) const`.
template <class Op, Family F>
class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(const KernelInfo& info) : op_(info) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      unary_loop<T, T>(x, y, [op = op_](T v) { return static_cast<T>(op(v)); },
                       std::is_floating_point_v<T> ? &ctx.threads() : nullptr);
    };
    const std::string w = ctx.where();
    if constexpr (F == Family::Float) dispatch_float(x.dtype(), w, run);
    else if constexpr (F == Family::Signed) dispatch_signed(x.dtype(), w, run);
    else if constexpr (F == Family::Numeric) dispatch_numeric(x.dtype(), w, run);
    else {
      if (x.dtype() != DataType::Bool) throw_unsupported_dtype(w, x.dtype());
      run(Tag<bool>{});
    }
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

 private:
  Op op_;
};

#define FUSOR_SIMPLE_UNARY(Name, expr)                      \
  struct Name {                                             \
    explicit Name(const KernelInfo&) {}                     \
    template <class T> T operator()(T x) const { return expr; } \
  };

FUSOR_SIMPLE_UNARY(SqrtOp, std::sqrt(x))
FUSOR_SIMPLE_UNARY(ReciprocalOp, T(1) / x)
FUSOR_SIMPLE_UNARY(ExpOp, std::exp(x))
FUSOR_SIMPLE_UNARY(LogOp, std::log(x))
FUSOR_SIMPLE_UNARY(ErfOp, std::erf(x))
FUSOR_SIMPLE_UNARY(TanhOp, std::tanh(x))
FUSOR_SIMPLE_UNARY(SigmoidOp, x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x)))
FUSOR_SIMPLE_UNARY(SoftsignOp, x / (T(1) + std::abs(x)))
FUSOR_SIMPLE_UNARY(SoftplusOp, x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
FUSOR_SIMPLE_UNARY(MishOp, x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x))))
FUSOR_SIMPLE_UNARY(HardSwishOp, x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5))))
FUSOR_SIMPLE_UNARY(FloorOp, std::floor(x))
FUSOR_SIMPLE_UNARY(CeilOp, std::ceil(x))
FUSOR_SIMPLE_UNARY(RoundOp, std::nearbyint(x))  // half to even in the default rounding mode
FUSOR_SIMPLE_UNARY(SinOp, std::sin(x))
FUSOR_SIMPLE_UNARY(CosOp, std::cos(x))
FUSOR_SIMPLE_UNARY(TanOp, std::tan(x))
FUSOR_SIMPLE_UNARY(AsinOp, std::asin(x))
FUSOR_SIMPLE_UNARY(AcosOp, std::acos(x))
FUSOR_SIMPLE_UNARY(AtanOp, std::atan(x))
FUSOR_SIMPLE_UNARY(SinhOp, std::sinh(x))
FUSOR_SIMPLE_UNARY(CoshOp, std::cosh(x))
FUSOR_SIMPLE_UNARY(AsinhOp, std::asinh(x))
FUSOR_SIMPLE_UNARY(AcoshOp, std::acosh(x))
FUSOR_SIMPLE_UNARY(AtanhOp, std::atanh(x))
FUSOR_SIMPLE_UNARY(ReluOp, x > T(0) ? x : T(0))
FUSOR_SIMPLE_UNARY(NegOp, wrap_sub(T(0), x))
FUSOR_SIMPLE_UNARY(NotOp, !x)
#undef FUSOR_SIMPLE_UNARY

struct AbsOp {
  explicit AbsOp(const KernelInfo&) {}
  template <class T> T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) return x;
    else return x < T(0) ? wrap_sub(T(0), x) : x;
  }
};

struct SignOp {
  explicit SignOp(const KernelInfo&) {}
  template <class T> T operator()(T x) const { return x > T(0) ? T(1) : (x < T(0) ? static_cast<T>(-1) : T(0)); }
};

// Activations with attributes: read once here, applied per element in the element type.
struct LeakyReluOp {
  float alpha;
  explicit LeakyReluOp(const KernelInfo& i) : alpha(i.n().attr_float("alpha", 0.01f)) {}
  template <class T> T operator()(T x) const { return x < 0 ? static_cast<T>(alpha) * x : x; }
};
struct EluOp {
  float alpha;
  explicit EluOp(const KernelInfo& i) : alpha(i.n().attr_float("alpha", 1.0f)) {}
  template <class T> T operator()(T x) const { return x < 0 ? static_cast<T>(alpha) * (std::exp(x) - T(1)) : x; }
};
struct SeluOp {
  float alpha, gamma;
  explicit SeluOp(const KernelInfo& i)
      : alpha(i.n().attr_float("alpha", 1.67326319217681884765625f)),
        gamma(i.n().attr_float("gamma", 1.05070102214813232421875f)) {}
  template <class T> T operator()(T x) const {
    return x > 0 ? static_cast<T>(gamma) * x : static_cast<T>(gamma) * (static_cast<T>(alpha) * std::exp(x) - static_cast<T>(alpha));
  }
};
struct CeluOp {
  float alpha;
  explicit CeluOp(const KernelInfo& i) : alpha(i.n().attr_float("alpha", 1.0f)) {}
  template <class T> T operator()(T x) const {
    T a = static_cast<T>(alpha);
    return std::max(T(0), x) + std::min(T(0), a * (std::exp(x / a) - T(1)));
  }
};
struct HardSigmoidOp {
  float alpha, beta;
  explicit HardSigmoidOp(const KernelInfo& i)
      : alpha(i.n().attr_float("alpha", 0.2f)), beta(i.n().attr_float("beta", 0.5f)) {}
  template <class T> T operator()(T x) const {
    const T v = static_cast<T>(alpha) * x + static_cast<T>(beta);
    return v < T(0) ? T(0) : v > T(1) ? T(1) : v;  // NaN stays NaN
  }
};
struct ThresholdedReluOp {
  float alpha;
  explicit ThresholdedReluOp(const KernelInfo& i) : alpha(i.n().attr_float("alpha", 1.0f)) {}
  template <class T> T operator()(T x) const { return x > static_cast<T>(alpha) ? x : T(0); }
};
struct ShrinkOp {
  double lambd, bias;
  explicit ShrinkOp(const KernelInfo& i) : lambd(i.n().attr_float("lambd", 0.5f)), bias(i.n().attr_float("bias", 0.0f)) {}
  template <class T> T operator()(T x) const {
    double v = static_cast<double>(x);
    return static_cast<T>(v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
  }
};

// IsNaN / IsInf: float in, bool out.
class IsNaNKernel : public Kernel {
 public:
  explicit IsNaNKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    Tensor& y = ctx.output(0, x.shape(), DataType::Bool);
    dispatch_float(x.dtype(), ctx.where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      unary_loop<T, bool>(x, y, [](T v) { return std::isnan(v); });
    });
  }
};

class IsInfKernel : public Kernel {
 public:
  explicit IsInfKernel(const KernelInfo& info)
      : neg_(info.n().attr_int("detect_negative", 1) != 0), pos_(info.n().attr_int("detect_positive", 1) != 0) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    Tensor& y = ctx.output(0, x.shape(), DataType::Bool);
    dispatch_float(x.dtype(), ctx.where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      unary_loop<T, bool>(x, y, [&](T v) { return std::isinf(v) && ((v > 0 && pos_) || (v < 0 && neg_)); });
    });
  }

 private:
  bool neg_, pos_;
};

// Clip: bounds are attributes before opset 11 and optional inputs 1 and 2 from opset 11.
class ClipKernel : public Kernel {
 public:
  explicit ClipKernel(const KernelInfo& info) : bounds_as_inputs_(info.opset == 0 || info.opset >= 11) {
    if (!bounds_as_inputs_) {
      attr_min_ = info.n().attr_float("min", -std::numeric_limits<float>::infinity());
      attr_max_ = info.n().attr_float("max", std::numeric_limits<float>::infinity());
    }
  }
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    dispatch_numeric(x.dtype(), ctx.where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if constexpr (std::is_floating_point_v<T>) {
        lo = -std::numeric_limits<T>::infinity();
        hi = std::numeric_limits<T>::infinity();
      }
      if (bounds_as_inputs_) {
        for (int k = 1; k <= 2; ++k) {
          const Tensor* b = optional_input(ctx, k);
          if (!b) continue;
          if (b->dtype() != x.dtype() || b->numel() != 1)
            throw_bad_input(ctx.where() + ": " + (k == 1 ? "min" : "max") + " must be a scalar of the input's type");
          (k == 1 ? lo : hi) = b->data<T>()[0];
        }
      } else {
        lo = static_cast<T>(std::max<double>(attr_min_, static_cast<double>(lo)));
        hi = static_cast<T>(std::min<double>(attr_max_, static_cast<double>(hi)));
      }
      unary_loop<T, T>(x, y, [lo, hi](T v) { return v < lo ? lo : (v > hi ? hi : v); }, &ctx.threads());
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

 private:
  bool bounds_as_inputs_;
  float attr_min_ = 0, attr_max_ = 0;
};

template <class Op, Family F>
void add_unary(KernelRegistry& r, const char* name) {
  add_reference_kernel<UnaryKernel<Op, F>>(r, name);
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  add_unary<SqrtOp, Family::Float>(r, "Sqrt");
  add_unary<ReciprocalOp, Family::Float>(r, "Reciprocal");
  add_unary<ExpOp, Family::Float>(r, "Exp");
  add_unary<LogOp, Family::Float>(r, "Log");
  add_unary<ErfOp, Family::Float>(r, "Erf");
  add_unary<TanhOp, Family::Float>(r, "Tanh");
  add_unary<SigmoidOp, Family::Float>(r, "Sigmoid");
  add_unary<SoftsignOp, Family::Float>(r, "Softsign");
  add_unary<SoftplusOp, Family::Float>(r, "Softplus");
  add_unary<MishOp, Family::Float>(r, "Mish");
  add_unary<HardSwishOp, Family::Float>(r, "HardSwish");
  add_unary<FloorOp, Family::Float>(r, "Floor");
  add_unary<CeilOp, Family::Float>(r, "Ceil");
  add_unary<RoundOp, Family::Float>(r, "Round");
  add_unary<SinOp, Family::Float>(r, "Sin");
  add_unary<CosOp, Family::Float>(r, "Cos");
  add_unary<TanOp, Family::Float>(r, "Tan");
  add_unary<AsinOp, Family::Float>(r, "Asin");
  add_unary<AcosOp, Family::Float>(r, "Acos");
  add_unary<AtanOp, Family::Float>(r, "Atan");
  add_unary<SinhOp, Family::Float>(r, "Sinh");
  add_unary<CoshOp, Family::Float>(r, "Cosh");
  add_unary<AsinhOp, Family::Float>(r, "Asinh");
  add_unary<AcoshOp, Family::Float>(r, "Acosh");
  add_unary<AtanhOp, Family::Float>(r, "Atanh");
  add_unary<ReluOp, Family::Signed>(r, "Relu");
  add_unary<NegOp, Family::Signed>(r, "Neg");
  add_unary<AbsOp, Family::Numeric>(r, "Abs");
  add_unary<SignOp, Family::Numeric>(r, "Sign");
  add_unary<NotOp, Family::Bool>(r, "Not");
  add_unary<LeakyReluOp, Family::Float>(r, "LeakyRelu");
  add_unary<EluOp, Family::Float>(r, "Elu");
  add_unary<SeluOp, Family::Float>(r, "Selu");
  add_unary<CeluOp, Family::Float>(r, "Celu");
  add_unary<HardSigmoidOp, Family::Float>(r, "HardSigmoid");
  add_unary<ThresholdedReluOp, Family::Float>(r, "ThresholdedRelu");
  add_unary<ShrinkOp, Family::Numeric>(r, "Shrink");
  add_reference_kernel<IsNaNKernel>(r, "IsNaN");
  add_reference_kernel<IsInfKernel>(r, "IsInf");
  add_reference_kernel<ClipKernel>(r, "Clip");
}

}  // namespace fusor
