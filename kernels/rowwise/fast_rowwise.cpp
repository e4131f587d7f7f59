// Fast ReduceSum / ReduceMean over a trailing block of axes and Softmax over the last axis (any
// axis before opset 13, whose coerced rows are always trailing), float32: each row of contiguous
// input elements by the vector loops of kernels/rowwise/row_ops.h, rows split over the threads.
// Other element types, reduced axes that are not a trailing block, empty axes (reduce all, or the
// noop identity), empty rows and Softmax along an inner axis go to the reference kernel.
#include <algorithm>
#include <cstring>

#include "kernels/common/axes.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/register.h"
#include "kernels/rowwise/row_ops.h"
#include "kernels/thread_pool.h"

namespace fusor {
namespace {

template <bool kMean>
class FastReduce : public FastKernel {
 public:
  FastReduce(const KernelInfo& info, int axes_input_since) : FastKernel(info) {
    const Node& n = info.n();
    keepdims_ = n.attr_int("keepdims", 1) != 0;
    axes_from_input_ = info.opset == 0 ? n.inputs.size() > 1 : info.opset >= axes_input_since;
    if (!axes_from_input_) axes_ = n.attr_ints("axes");
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (x.dtype() != DataType::Float) return fallback_->compute(ctx);
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_)
      if (const Tensor* a = optional_input(ctx, 1)) axes = int_list_input(*a, where_, "axes");
    if (axes.empty()) return fallback_->compute(ctx);  // everything, or the noop identity
    const int64_t rank = x.rank();
    std::vector<int64_t> norm = normalize_axes(axes, rank, where_);
    std::sort(norm.begin(), norm.end());
    norm.erase(std::unique(norm.begin(), norm.end()), norm.end());
    const int64_t first = rank - static_cast<int64_t>(norm.size());
    for (size_t k = 0; k < norm.size(); ++k)
      if (norm[k] != first + static_cast<int64_t>(k)) return fallback_->compute(ctx);
    Shape out;
    int64_t len = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < first) out.push_back(x.dim(d));
      else if (keepdims_) out.push_back(1);
      if (d >= first) len *= x.dim(d);
    }
    if (len == 0) return fallback_->compute(ctx);  // empty rows: the reference's 0 / NaN
    Tensor& y = ctx.output(0, out, DataType::Float);
    const int64_t rows = y.numel();
    const float* px = x.data<float>();
    float* py = y.data<float>();
    const rowwise::RowOps& ops = rowwise::row_ops();
    const float scale = kMean ? 1.0f / static_cast<float>(len) : 1.0f;
    ctx.threads().parallel_for_cost(rows, 0.1 * static_cast<double>(len), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) py[r] = ops.sum(px + r * len, len) * scale;
    });
  }

 private:
  bool keepdims_ = true, axes_from_input_ = false;
  std::vector<int64_t> axes_;
};

class FastSoftmax : public FastKernel {
 public:
  explicit FastSoftmax(const KernelInfo& info)
      : FastKernel(info), coerce_2d_(info.opset > 0 && info.opset < 13),
        axis_(info.n().attr_int("axis", coerce_2d_ ? 1 : -1)) {}

  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (x.dtype() != DataType::Float || x.rank() == 0 || x.numel() == 0) return fallback_->compute(ctx);
    const int64_t axis = normalize_axis(axis_, x.rank(), where_);
    if (!coerce_2d_ && axis != x.rank() - 1) return fallback_->compute(ctx);
    const int64_t len = dims_product(x.shape(), axis, x.rank());
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    const int64_t rows = x.numel() / len;
    const float* px = x.data<float>();
    float* py = y.data<float>();
    const rowwise::RowOps& ops = rowwise::row_ops();
    ctx.threads().parallel_for_cost(rows, 1.0 * static_cast<double>(len), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) ops.softmax(px + r * len, py + r * len, len);
    });
  }

 private:
  bool coerce_2d_;
  int64_t axis_;
};

}  // namespace

void register_fast_rowwise_kernels(KernelRegistry& r) {
  r.add("", "ReduceSum", "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<FastReduce<false>>(info, 13);
  });
  r.add("", "ReduceMean", "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<FastReduce<true>>(info, 18);
  });
  add_fast_kernel<FastSoftmax>(r, "", "Softmax");
}

}  // namespace fusor
