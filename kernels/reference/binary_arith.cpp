// Binary arithmetic reference kernels with multidirectional broadcasting:
// Add Sub Mul Div Pow Mod BitShift PRelu.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/elementwise_loops.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

// Integer division faults on a zero divisor and on MIN / -1; both are input errors, not crashes.
template <class T>
void check_int_divisor(T a, T b, const std::string& where) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) throw_bad_input(where + ": integer division by zero");
    if constexpr (std::is_signed_v<T>)
      if (b == T(-1) && a == std::numeric_limits<T>::min()) throw_bad_input(where + ": integer division overflow");
  }
}

void require_same_dtype(const Tensor& a, const Tensor& b, const std::string& where) {
  if (a.dtype() != b.dtype())
    throw_bad_input(where + ": inputs have different element types " + dtype_name(a.dtype()) + " and " +
                    dtype_name(b.dtype()));
}

enum class ArithOp { Add, Sub, Mul, Div };

template <ArithOp K>
class ArithKernel : public Kernel {
 public:
  explicit ArithKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const std::string w = ctx.where();
    require_same_dtype(a, b, w);
    Tensor& y = ctx.output(0, broadcast_shapes({a.shape(), b.shape()}, w), a.dtype());
    dispatch_numeric(a.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      binary_loop<T, T, T>(a, b, y, [&](T p, T q) -> T {
        if constexpr (K == ArithOp::Add) return wrap_add(p, q);
        else if constexpr (K == ArithOp::Sub) return wrap_sub(p, q);
        else if constexpr (K == ArithOp::Mul) return wrap_mul(p, q);
        else {
          check_int_divisor(p, q, w);
          return static_cast<T>(p / q);
        }
      }, std::is_floating_point_v<T> ? &ctx.threads() : nullptr);  // integer Div may throw: caller only
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}, {1, 0}}; }
};

// Pow: the exponent may have another numeric type than the base (opset 12+); output = base type.
class PowKernel : public Kernel {
 public:
  explicit PowKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const std::string w = ctx.where();
    Tensor& y = ctx.output(0, broadcast_shapes({a.shape(), b.shape()}, w), a.dtype());
    dispatch_numeric(a.dtype(), w, [&](auto ta) {
      using TA = typename decltype(ta)::type;
      dispatch_numeric(b.dtype(), w, [&](auto tb) {
        using TB = typename decltype(tb)::type;
        binary_loop<TA, TB, TA>(a, b, y, [](TA p, TB q) {
          if constexpr (std::is_same_v<TA, float> && std::is_same_v<TB, float>) return std::pow(p, q);
          else return static_cast<TA>(std::pow(static_cast<double>(p), static_cast<double>(q)));
        });
      });
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }
};

// Mod: fmod=0 takes the divisor's sign (Python %); fmod=1 takes the dividend's (C fmod).
class ModKernel : public Kernel {
 public:
  explicit ModKernel(const KernelInfo& info) : fmod_(info.n().attr_int("fmod", 0) != 0) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const std::string w = ctx.where();
    require_same_dtype(a, b, w);
    Tensor& y = ctx.output(0, broadcast_shapes({a.shape(), b.shape()}, w), a.dtype());
    dispatch_numeric(a.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      binary_loop<T, T, T>(a, b, y, [&](T p, T q) -> T {
        if constexpr (std::is_floating_point_v<T>) {
          T r = std::fmod(p, q);
          if (!fmod_ && r != 0 && ((r < 0) != (q < 0))) r += q;
          return r;
        } else {
          check_int_divisor(p, q, w);
          T r = static_cast<T>(p % q);
          if constexpr (std::is_signed_v<T>)
            if (!fmod_ && r != 0 && ((r < 0) != (q < 0))) r = wrap_add(r, q);
          return r;
        }
      });
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}, {1, 0}}; }

 private:
  bool fmod_;
};

class BitShiftKernel : public Kernel {
 public:
  explicit BitShiftKernel(const KernelInfo& info) {
    std::string d = info.n().attr_string("direction", "");
    if (d != "LEFT" && d != "RIGHT") throw_bad_input(info.where() + ": direction must be LEFT or RIGHT");
    left_ = d == "LEFT";
  }
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const std::string w = ctx.where();
    require_same_dtype(a, b, w);
    Tensor& y = ctx.output(0, broadcast_shapes({a.shape(), b.shape()}, w), a.dtype());
    dispatch_numeric(a.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_unsigned_v<T>) {
        throw_unsupported_dtype(w, a.dtype());
      } else {
        binary_loop<T, T, T>(a, b, y, [&](T p, T q) -> T {
          if (q >= sizeof(T) * 8) return T(0);
          return left_ ? static_cast<T>(p << q) : static_cast<T>(p >> q);
        });
      }
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}, {1, 0}}; }

 private:
  bool left_;
};

// PRelu: slope broadcasts to X (unidirectional since opset 7).
class PReluKernel : public Kernel {
 public:
  explicit PReluKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const Tensor& s = required_input(ctx, 1);
    const std::string w = ctx.where();
    require_same_dtype(x, s, w);
    Tensor& y = ctx.output(0, broadcast_shapes({x.shape(), s.shape()}, w), x.dtype());
    dispatch_signed(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      binary_loop<T, T, T>(x, s, y, [](T v, T k) { return v < T(0) ? wrap_mul(v, k) : v; });
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }
};

}  // namespace

void register_binary_arith_kernels(KernelRegistry& r) {
  add_reference_kernel<ArithKernel<ArithOp::Add>>(r, "Add");
  add_reference_kernel<ArithKernel<ArithOp::Sub>>(r, "Sub");
  add_reference_kernel<ArithKernel<ArithOp::Mul>>(r, "Mul");
  add_reference_kernel<ArithKernel<ArithOp::Div>>(r, "Div");
  add_reference_kernel<PowKernel>(r, "Pow");
  add_reference_kernel<ModKernel>(r, "Mod");
  add_reference_kernel<BitShiftKernel>(r, "BitShift");
  add_reference_kernel<PReluKernel>(r, "PRelu");
}

}  // namespace fusor
