// ArgMax/ArgMin, CumSum and TopK reference kernels: ops that walk one axis of an
// (outer, axis, inner) view of the input.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "kernels/common/axes.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

template <bool IsMax>
class ArgKernel : public Kernel {
 public:
  explicit ArgKernel(const KernelInfo& info)
      : axis_(info.n().attr_int("axis", 0)), keepdims_(info.n().attr_int("keepdims", 1) != 0),
        last_(info.n().attr_int("select_last_index", 0) != 0) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    const int64_t axis = normalize_axis(axis_, x.rank(), w);
    const int64_t outer = dims_product(x.shape(), 0, axis), len = x.dim(axis),
                  inner = dims_product(x.shape(), axis + 1, x.rank());
    if (len == 0) throw_bad_input(w + ": cannot take the arg of an empty axis");
    Shape out = x.shape();
    if (keepdims_) out[axis] = 1;
    else out.erase(out.begin() + axis);
    Tensor& y = ctx.output(0, out, DataType::Int64);
    int64_t* py = y.data<int64_t>();
    dispatch_numeric(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T* base = px + o * len * inner + i;
          int64_t best = 0;
          for (int64_t k = 1; k < len; ++k) {
            T v = base[k * inner], b = base[best * inner];
            bool better = IsMax ? (v > b || (last_ && v == b)) : (v < b || (last_ && v == b));
            if (better) best = k;
          }
          py[o * inner + i] = best;
        }
    });
  }

 private:
  int64_t axis_;
  bool keepdims_, last_;
};

class CumSumKernel : public Kernel {
 public:
  explicit CumSumKernel(const KernelInfo& info)
      : exclusive_(info.n().attr_int("exclusive", 0) != 0), reverse_(info.n().attr_int("reverse", 0) != 0) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    std::vector<int64_t> av = int_list_input(required_input(ctx, 1), w, "axis");
    if (av.size() != 1) throw_bad_input(w + ": axis must be a scalar");
    const int64_t axis = normalize_axis(av[0], x.rank(), w);
    const int64_t outer = dims_product(x.shape(), 0, axis), len = x.dim(axis),
                  inner = dims_product(x.shape(), axis + 1, x.rank());
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    dispatch_numeric(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          T run = T(0);
          for (int64_t s = 0; s < len; ++s) {
            int64_t k = reverse_ ? len - 1 - s : s;
            int64_t off = (o * len + k) * inner + i;
            T v = px[off];
            if (exclusive_) { py[off] = run; run = wrap_add(run, v); }
            else { run = wrap_add(run, v); py[off] = run; }
          }
        }
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

 private:
  bool exclusive_, reverse_;
};

// TopK: k is an attribute before opset 10 and input 1 from opset 10. Ties keep the lower index
// first. sorted=0 still returns sorted results (allowed by the spec).
class TopKKernel : public Kernel {
 public:
  explicit TopKKernel(const KernelInfo& info)
      : axis_(info.n().attr_int("axis", -1)), largest_(info.n().attr_int("largest", 1) != 0),
        k_from_input_(info.opset == 0 || info.opset >= 10), k_attr_(info.n().attr_int("k", -1)) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    int64_t k = k_attr_;
    if (k_from_input_) {
      std::vector<int64_t> kv = int_list_input(required_input(ctx, 1), w, "K");
      if (kv.size() != 1) throw_bad_input(w + ": K must hold one value");
      k = kv[0];
    }
    const int64_t axis = normalize_axis(axis_, x.rank(), w);
    const int64_t outer = dims_product(x.shape(), 0, axis), len = x.dim(axis),
                  inner = dims_product(x.shape(), axis + 1, x.rank());
    if (k < 0 || k > len) throw_bad_input(w + ": K=" + std::to_string(k) + " is outside [0, " + std::to_string(len) + "]");
    Shape out = x.shape();
    out[axis] = k;
    Tensor& vals = ctx.output(0, out, x.dtype());
    Tensor* idxs = ctx.output_wanted(1) ? &ctx.output(1, out, DataType::Int64) : nullptr;
    dispatch_numeric(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* pv = vals.data<T>();
      std::vector<int64_t> order(static_cast<size_t>(len));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T* base = px + o * len * inner + i;
          std::iota(order.begin(), order.end(), 0);
          auto before = [&](int64_t a, int64_t b) {
            T va = base[a * inner], vb = base[b * inner];
            if (va == vb) return a < b;
            return largest_ ? va > vb : va < vb;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            int64_t off = (o * k + j) * inner + i;
            pv[off] = base[order[j] * inner];
            if (idxs) idxs->data<int64_t>()[off] = order[j];
          }
        }
    });
  }

 private:
  int64_t axis_;
  bool largest_, k_from_input_;
  int64_t k_attr_;
};

}  // namespace

void register_argminmax_kernels(KernelRegistry& r) {
  add_reference_kernel<ArgKernel<true>>(r, "ArgMax");
  add_reference_kernel<ArgKernel<false>>(r, "ArgMin");
}
void register_cumsum_kernels(KernelRegistry& r) { add_reference_kernel<CumSumKernel>(r, "CumSum"); }
void register_topk_kernels(KernelRegistry& r) { add_reference_kernel<TopKKernel>(r, "TopK"); }

}  // namespace fusor
