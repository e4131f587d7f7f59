// Slice, Expand and Tile reference kernels.
#include <algorithm>
#include <limits>

#include "kernels/common/axes.h"
#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/strided_copy.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

// Slice: starts/ends/axes are attributes before opset 10; from opset 10 they (and steps) are
// inputs 1..4. Out-of-range starts/ends clamp as the spec says.
class SliceKernel : public Kernel {
 public:
  explicit SliceKernel(const KernelInfo& info) : from_inputs_(info.opset == 0 ? node_has_input(info, 1) : info.opset >= 10) {
    if (!from_inputs_) {
      starts_ = info.n().attr_ints("starts");
      ends_ = info.n().attr_ints("ends");
      axes_ = info.n().attr_ints("axes");
    }
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (from_inputs_) {
      starts = int_list_input(required_input(ctx, 1), w, "starts");
      ends = int_list_input(required_input(ctx, 2), w, "ends");
      if (const Tensor* a = optional_input(ctx, 3)) axes = int_list_input(*a, w, "axes");
      if (const Tensor* s = optional_input(ctx, 4)) steps = int_list_input(*s, w, "steps");
    }
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
      throw_bad_input(w + ": starts, ends, axes and steps differ in length");
    const int rank = x.rank();
    Shape out = x.shape();
    std::vector<int64_t> first(rank, 0), step(rank, 1);
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = normalize_axis(axes[i], rank, w);
      if (seen[a]) throw_bad_input(w + ": repeated axis");
      seen[a] = true;
      const int64_t dim = x.dim(static_cast<int>(a)), st = steps[i];
      if (st == 0) throw_bad_input(w + ": step is 0");
      int64_t s = starts[i], e = ends[i];
      if (s < 0) s = s < std::numeric_limits<int64_t>::min() + dim ? std::numeric_limits<int64_t>::min() : s + dim;
      if (e < 0) e = e < std::numeric_limits<int64_t>::min() + dim ? std::numeric_limits<int64_t>::min() : e + dim;
      int64_t count;
      if (dim == 0) {
        count = 0;
        s = 0;
      } else if (st > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        count = e > s ? (e - s + st - 1) / st : 0;
      } else {
        s = std::clamp<int64_t>(s, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        count = s > e ? (s - e + (-st) - 1) / (-st) : 0;
      }
      out[a] = count;
      first[a] = s;
      step[a] = st;
    }
    Tensor& y = ctx.output(0, out, x.dtype());
    if (y.numel() == 0) return;
    std::vector<int64_t> in_strides = row_major_strides(x.shape()), st(rank);
    int64_t base = 0;
    for (int d = 0; d < rank; ++d) {
      base += first[d] * in_strides[d];
      st[d] = step[d] * in_strides[d];
    }
    strided_copy(x, base, st, y, &ctx.threads());
  }

 private:
  bool from_inputs_;
  std::vector<int64_t> starts_, ends_, axes_;
};

class ExpandKernel : public Kernel {
 public:
  explicit ExpandKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    Shape target = int_list_input(required_input(ctx, 1), w, "shape");
    Shape out = broadcast_shapes({x.shape(), target}, w);
    Tensor& y = ctx.output(0, out, x.dtype());
    if (y.numel() == 0) return;
    std::vector<int64_t> in_strides = row_major_strides(x.shape()), st(out.size(), 0);
    const size_t off = out.size() - x.shape().size();
    for (size_t d = 0; d < x.shape().size(); ++d) st[off + d] = x.shape()[d] == 1 ? 0 : in_strides[d];
    strided_copy(x, 0, st, y, &ctx.threads());
  }
};

class TileKernel : public Kernel {
 public:
  explicit TileKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    std::vector<int64_t> reps = int_list_input(required_input(ctx, 1), w, "repeats");
    const int rank = x.rank();
    if (static_cast<int>(reps.size()) != rank) throw_bad_input(w + ": repeats length does not match the input rank");
    Shape out(rank);
    for (int d = 0; d < rank; ++d) {
      if (reps[d] < 0) throw_bad_input(w + ": negative repeat");
      out[d] = x.dim(d) * reps[d];
    }
    Tensor& y = ctx.output(0, out, x.dtype());
    const int64_t n = y.numel();
    if (n == 0) return;
    std::vector<int64_t> in_strides = row_major_strides(x.shape()), counter(rank, 0), inpos(rank, 0);
    auto walk = [&](auto&& move) {
      int64_t off = 0;
      for (int64_t i = 0; i < n; ++i) {
        move(i, off);
        for (int d = rank - 1; d >= 0; --d) {
          ++counter[d];
          if (++inpos[d] == x.dim(d)) {  // wrap within the input: back to its start
            inpos[d] = 0;
            off -= in_strides[d] * (x.dim(d) - 1);
          } else {
            off += in_strides[d];
          }
          if (counter[d] < out[d]) break;
          counter[d] = 0;
          // counter wrapped: inpos also wrapped (out[d] is a multiple of the input dim)
        }
      }
    };
    if (x.dtype() == DataType::String) {
      walk([&](int64_t i, int64_t off) { y.string_data()[i] = x.string_data()[off]; });
      return;
    }
    dispatch_by_size(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      walk([&](int64_t i, int64_t off) { py[i] = px[off]; });
    });
  }
};

}  // namespace

void register_slice_kernels(KernelRegistry& r) { add_reference_kernel<SliceKernel>(r, "Slice"); }
void register_expand_tile_kernels(KernelRegistry& r) {
  add_reference_kernel<ExpandKernel>(r, "Expand");
  add_reference_kernel<TileKernel>(r, "Tile");
}

}  // namespace fusor
