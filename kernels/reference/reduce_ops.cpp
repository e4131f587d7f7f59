// Reduce* reference kernels. Axes come from the `axes` attribute, or from input 1 for ReduceSum
// since opset 13 (and every Reduce* since opset 18). No axes reduces everything unless
// noop_with_empty_axes=1, which makes the op an identity.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/common/axes.h"
#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

template <Red K>
class ReduceKernel : public Kernel {
 public:
  ReduceKernel(const KernelInfo& info, int axes_input_since) {
    const Node& n = info.n();
    keepdims_ = n.attr_int("keepdims", 1) != 0;
    noop_ = n.attr_int("noop_with_empty_axes", 0) != 0;
    axes_from_input_ = info.opset == 0 ? n.inputs.size() > 1 : info.opset >= axes_input_since;
    if (!axes_from_input_) axes_ = n.attr_ints("axes");
  }

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_)
      if (const Tensor* a = optional_input(ctx, 1)) axes = int_list_input(*a, w, "axes");
    if (axes.empty() && noop_) {
      Tensor& y = ctx.output(0, x.shape(), x.dtype());
      if (x.nbytes()) std::memcpy(y.raw(), x.raw(), x.nbytes());
      return;
    }
    const int64_t rank = x.rank();
    std::vector<bool> reduced(rank, axes.empty());
    for (int64_t a : normalize_axes(axes, rank, w)) reduced[a] = true;
    Shape kept, out;  // kept: rank-preserving (1 on reduced axes)
    int64_t group = 1;
    for (int64_t d = 0; d < rank; ++d) {
      kept.push_back(reduced[d] ? 1 : x.dim(d));
      if (reduced[d]) group *= x.dim(d);
      if (!reduced[d] || keepdims_) out.push_back(kept.back());
    }
    Tensor& y = ctx.output(0, out, x.dtype());
    dispatch_numeric(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double,
                                     std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
      const int64_t m = y.numel(), n = x.numel();
      const T* px = x.data<T>();
      std::vector<Acc> acc(static_cast<size_t>(m));
      std::vector<Acc> shift(static_cast<size_t>(m), Acc(0));  // LogSumExp: per-group max
      Acc init = Acc(0);
      if constexpr (K == Red::Prod) init = Acc(1);
      if constexpr (K == Red::Max) init = std::is_floating_point_v<T> ? -std::numeric_limits<Acc>::infinity() : static_cast<Acc>(std::numeric_limits<T>::lowest());
      if constexpr (K == Red::Min) init = std::is_floating_point_v<T> ? std::numeric_limits<Acc>::infinity() : static_cast<Acc>(std::numeric_limits<T>::max());
      std::fill(acc.begin(), acc.end(), init);
      if constexpr (K == Red::LogSumExp) {
        std::fill(shift.begin(), shift.end(), -std::numeric_limits<Acc>::infinity());
        BroadcastIndex it(x.shape(), {kept});
        for (int64_t i = 0; i < n; ++i, it.next()) shift[it.offset(0)] = std::max<Acc>(shift[it.offset(0)], px[i]);
        for (Acc& s : shift)
          if (!std::isfinite(static_cast<double>(s))) s = 0;
      }
      BroadcastIndex it(x.shape(), {kept});
      for (int64_t i = 0; i < n; ++i, it.next()) {
        Acc v = static_cast<Acc>(px[i]);
        Acc& a = acc[it.offset(0)];
        if constexpr (K == Red::Sum || K == Red::Mean || K == Red::LogSum) a = wrap_add(a, v);
        else if constexpr (K == Red::Max) a = (std::is_floating_point_v<T> && std::isnan(static_cast<double>(v))) || v > a ? v : a;
        else if constexpr (K == Red::Min) a = (std::is_floating_point_v<T> && std::isnan(static_cast<double>(v))) || v < a ? v : a;
        else if constexpr (K == Red::Prod) a = wrap_mul(a, v);
        else if constexpr (K == Red::L1) a = wrap_add(a, v < Acc(0) ? wrap_sub(Acc(0), v) : v);
        else if constexpr (K == Red::L2 || K == Red::SumSquare) a = wrap_add(a, wrap_mul(v, v));
        else a += static_cast<Acc>(std::exp(static_cast<double>(v - shift[it.offset(0)])));
      }
      T* py = y.data<T>();
      for (int64_t j = 0; j < m; ++j) {
        Acc a = acc[j];
        if constexpr (K == Red::Mean) py[j] = static_cast<T>(group ? static_cast<double>(a) / static_cast<double>(group) : std::nan(""));
        else if constexpr (K == Red::L2) py[j] = static_cast<T>(std::sqrt(static_cast<double>(a)));
        else if constexpr (K == Red::LogSum) py[j] = static_cast<T>(std::log(static_cast<double>(a)));
        else if constexpr (K == Red::LogSumExp) py[j] = static_cast<T>(std::log(static_cast<double>(a)) + static_cast<double>(shift[j]));
        else py[j] = static_cast<T>(a);
      }
    });
  }

 private:
  bool keepdims_ = true, noop_ = false, axes_from_input_ = false;
  std::vector<int64_t> axes_;
};

template <Red K>
void add_reduce(KernelRegistry& r, const char* name, int axes_input_since) {
  r.add("", name, "reference", 0, [axes_input_since](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    return std::make_unique<ReduceKernel<K>>(info, axes_input_since);
  });
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  add_reduce<Red::Sum>(r, "ReduceSum", 13);
  add_reduce<Red::Mean>(r, "ReduceMean", 18);
  add_reduce<Red::Max>(r, "ReduceMax", 18);
  add_reduce<Red::Min>(r, "ReduceMin", 18);
  add_reduce<Red::Prod>(r, "ReduceProd", 18);
  add_reduce<Red::L1>(r, "ReduceL1", 18);
  add_reduce<Red::L2>(r, "ReduceL2", 18);
  add_reduce<Red::LogSum>(r, "ReduceLogSum", 18);
  add_reduce<Red::LogSumExp>(r, "ReduceLogSumExp", 18);
  add_reduce<Red::SumSquare>(r, "ReduceSumSquare", 18);
}

}  // namespace fusor
