// Variadic elementwise reference kernels with broadcasting: Min Max Sum Mean.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class Var { Min, Max, Sum, Mean };

template <Var K>
class VariadicKernel : public Kernel {
 public:
  explicit VariadicKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const std::string w = ctx.where();
    std::vector<const Tensor*> ins;
    std::vector<Shape> shapes;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = required_input(ctx, i);
      if (!ins.empty() && t.dtype() != ins[0]->dtype()) throw_bad_input(w + ": inputs have different element types");
      ins.push_back(&t);
      shapes.push_back(t.shape());
    }
    if (ins.empty()) throw_bad_input(w + ": needs at least one input");
    Shape out = broadcast_shapes(shapes, w);
    Tensor& y = ctx.output(0, out, ins[0]->dtype());
    const int64_t n = y.numel();
    dispatch_numeric(ins[0]->dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      // Fold input k into y; input 0 initializes. y may alias an input of the output's size, which
      // is fine because each y[i] is only read/written at its own index.
      for (size_t k = 0; k < ins.size(); ++k) {
        const T* px = ins[k]->data<T>();
        BroadcastIndex it(out, {ins[k]->shape()});
        for (int64_t i = 0; i < n; ++i, it.next()) {
          T v = px[it.offset(0)];
          if (k == 0) { py[i] = v; continue; }
          if constexpr (K == Var::Min) py[i] = (std::is_floating_point_v<T> && std::isnan(v)) ? v : std::min(py[i], v);
          else if constexpr (K == Var::Max) py[i] = (std::is_floating_point_v<T> && std::isnan(v)) ? v : std::max(py[i], v);
          else py[i] = wrap_add(py[i], v);
        }
      }
      if constexpr (K == Var::Mean) {
        for (int64_t i = 0; i < n; ++i) py[i] = static_cast<T>(py[i] / static_cast<T>(ins.size()));
      }
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override {
    // Only input 0 is safe: later inputs are read after y has been written by the fold.
    return {{0, 0}};
  }
};

}  // namespace

void register_variadic_kernels(KernelRegistry& r) {
  add_reference_kernel<VariadicKernel<Var::Min>>(r, "Min");
  add_reference_kernel<VariadicKernel<Var::Max>>(r, "Max");
  add_reference_kernel<VariadicKernel<Var::Sum>>(r, "Sum");
  add_reference_kernel<VariadicKernel<Var::Mean>>(r, "Mean");
}

}  // namespace fusor
