// Pad reference kernel: modes constant, reflect, edge (and wrap). pads/value are attributes
// before opset 11; from opset 11 pads is input 1 and constant_value input 2. Negative pads crop.
#include <algorithm>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class PadMode { Constant, Reflect, Edge, Wrap };

class PadKernel : public Kernel {
 public:
  explicit PadKernel(const KernelInfo& info) : from_inputs_(info.opset == 0 ? node_has_input(info, 1) : info.opset >= 11) {
    std::string m = info.n().attr_string("mode", "constant");
    if (m == "constant") mode_ = PadMode::Constant;
    else if (m == "reflect") mode_ = PadMode::Reflect;
    else if (m == "edge") mode_ = PadMode::Edge;
    else if (m == "wrap") mode_ = PadMode::Wrap;
    else throw_bad_input(info.where() + ": unknown mode '" + m + "'");
    if (!from_inputs_) {
      pads_ = info.n().attr_ints(info.n().attr("pads") ? "pads" : "paddings");
      value_ = info.n().attr_float("value", 0.0f);
    }
  }
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    std::vector<int64_t> pads = pads_;
    const Tensor* cval = nullptr;
    if (from_inputs_) {
      pads = int_list_input(required_input(ctx, 1), w, "pads");
      cval = optional_input(ctx, 2);
      if (const Tensor* axes_t = optional_input(ctx, 3)) {  // opset 18 axes: expand to all dims
        std::vector<int64_t> axes = int_list_input(*axes_t, w, "axes");
        std::vector<int64_t> full(2 * x.rank(), 0);
        for (size_t i = 0; i < axes.size(); ++i) {
          int64_t a = axes[i] < 0 ? axes[i] + x.rank() : axes[i];
          if (a < 0 || a >= x.rank()) throw_bad_input(w + ": axis out of range");
          full[a] = pads[i];
          full[a + x.rank()] = pads[i + axes.size()];
        }
        pads = full;
      }
    }
    const int rank = x.rank();
    if (static_cast<int>(pads.size()) != 2 * rank) throw_bad_input(w + ": pads must have 2 * rank values");
    Shape out(rank);
    for (int d = 0; d < rank; ++d) {
      out[d] = x.dim(d) + pads[d] + pads[d + rank];
      if (out[d] < 0) throw_bad_input(w + ": pads crop more than the dim holds");
      if (mode_ != PadMode::Constant && x.dim(d) == 0 && out[d] > 0) throw_bad_input(w + ": cannot pad an empty dim in this mode");
      if (mode_ == PadMode::Reflect && x.dim(d) == 1 && (pads[d] > 0 || pads[d + rank] > 0))
        throw_bad_input(w + ": reflect padding needs a dim of at least 2");
    }
    Tensor& y = ctx.output(0, out, x.dtype());
    const int64_t n = y.numel();
    dispatch_numeric_bool(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T fill = cval && cval->numel() ? cval->data<T>()[0] : static_cast<T>(value_);
      const T* px = x.data<T>();
      T* py = y.data<T>();
      std::vector<int64_t> counter(rank, 0), st(rank, 1);
      for (int d = rank - 2; d >= 0; --d) st[d] = st[d + 1] * x.dim(d + 1);
      for (int64_t i = 0; i < n; ++i) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < rank && inside; ++d) {
          const int64_t len = x.dim(d);
          int64_t c = counter[d] - pads[d];
          if (c < 0 || c >= len) {
            switch (mode_) {
              case PadMode::Constant: inside = false; break;
              case PadMode::Edge: c = std::clamp<int64_t>(c, 0, len - 1); break;
              case PadMode::Wrap: c = ((c % len) + len) % len; break;
              case PadMode::Reflect: {
                const int64_t period = 2 * (len - 1);
                c = ((c % period) + period) % period;
                if (c >= len) c = period - c;
                break;
              }
            }
          }
          off += c * st[d];
        }
        py[i] = inside ? px[off] : fill;
        for (int d = rank - 1; d >= 0; --d) {
          if (++counter[d] < out[d]) break;
          counter[d] = 0;
        }
      }
    });
  }

 private:
  bool from_inputs_;
  PadMode mode_ = PadMode::Constant;
  std::vector<int64_t> pads_;
  float value_ = 0;
};

}  // namespace

void register_pad_kernels(KernelRegistry& r) { add_reference_kernel<PadKernel>(r, "Pad"); }

}  // namespace fusor
