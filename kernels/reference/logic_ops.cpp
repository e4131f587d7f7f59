// Comparison and logic reference kernels (bool outputs, broadcasting) and Where.
#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/elementwise_loops.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class Cmp { Equal, Less, LessOrEqual, Greater, GreaterOrEqual };

template <Cmp K>
class CompareKernel : public Kernel {
 public:
  explicit CompareKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const std::string w = ctx.where();
    if (a.dtype() != b.dtype()) throw_bad_input(w + ": inputs have different element types");
    Tensor& y = ctx.output(0, broadcast_shapes({a.shape(), b.shape()}, w), DataType::Bool);
    if (a.dtype() == DataType::String) {
      if constexpr (K != Cmp::Equal) throw_unsupported_dtype(w, a.dtype());
      const auto& sa = a.string_data();
      const auto& sb = b.string_data();
      bool* py = y.data<bool>();
      BroadcastIndex it(y.shape(), {a.shape(), b.shape()});
      const int64_t n = y.numel();
      for (int64_t i = 0; i < n; ++i, it.next()) py[i] = sa[it.offset(0)] == sb[it.offset(1)];
      return;
    }
    dispatch_numeric_bool(a.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      binary_loop<T, T, bool>(a, b, y, [](T p, T q) {
        if constexpr (K == Cmp::Equal) return p == q;
        else if constexpr (K == Cmp::Less) return p < q;
        else if constexpr (K == Cmp::LessOrEqual) return p <= q;
        else if constexpr (K == Cmp::Greater) return p > q;
        else return p >= q;
      });
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}, {1, 0}}; }
};

enum class Logic { And, Or, Xor };

template <Logic K>
class LogicKernel : public Kernel {
 public:
  explicit LogicKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const std::string w = ctx.where();
    if (a.dtype() != DataType::Bool || b.dtype() != DataType::Bool) throw_bad_input(w + ": inputs must be bool");
    Tensor& y = ctx.output(0, broadcast_shapes({a.shape(), b.shape()}, w), DataType::Bool);
    binary_loop<bool, bool, bool>(a, b, y, [](bool p, bool q) {
      if constexpr (K == Logic::And) return p && q;
      else if constexpr (K == Logic::Or) return p || q;
      else return p != q;
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}, {1, 0}}; }
};

class WhereKernel : public Kernel {
 public:
  explicit WhereKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& c = required_input(ctx, 0);
    const Tensor& x = required_input(ctx, 1);
    const Tensor& z = required_input(ctx, 2);
    const std::string w = ctx.where();
    if (c.dtype() != DataType::Bool) throw_bad_input(w + ": condition must be bool");
    if (x.dtype() != z.dtype()) throw_bad_input(w + ": X and Y have different element types");
    Shape out = broadcast_shapes({c.shape(), x.shape(), z.shape()}, w);
    Tensor& y = ctx.output(0, out, x.dtype());
    const bool* pc = c.data<bool>();
    BroadcastIndex it(out, {c.shape(), x.shape(), z.shape()});
    const int64_t n = y.numel();
    if (x.dtype() == DataType::String) {
      auto& py = y.string_data();
      for (int64_t i = 0; i < n; ++i, it.next())
        py[i] = pc[it.offset(0)] ? x.string_data()[it.offset(1)] : z.string_data()[it.offset(2)];
      return;
    }
    dispatch_by_size(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      const T* pz = z.data<T>();
      T* py = y.data<T>();
      for (int64_t i = 0; i < n; ++i, it.next()) py[i] = pc[it.offset(0)] ? px[it.offset(1)] : pz[it.offset(2)];
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{1, 0}, {2, 0}}; }
};

}  // namespace

void register_logic_kernels(KernelRegistry& r) {
  add_reference_kernel<CompareKernel<Cmp::Equal>>(r, "Equal");
  add_reference_kernel<CompareKernel<Cmp::Less>>(r, "Less");
  add_reference_kernel<CompareKernel<Cmp::LessOrEqual>>(r, "LessOrEqual");
  add_reference_kernel<CompareKernel<Cmp::Greater>>(r, "Greater");
  add_reference_kernel<CompareKernel<Cmp::GreaterOrEqual>>(r, "GreaterOrEqual");
  add_reference_kernel<LogicKernel<Logic::And>>(r, "And");
  add_reference_kernel<LogicKernel<Logic::Or>>(r, "Or");
  add_reference_kernel<LogicKernel<Logic::Xor>>(r, "Xor");
  add_reference_kernel<WhereKernel>(r, "Where");
}

}  // namespace fusor
