// Indexing reference kernels: Gather GatherElements GatherND ScatterND ScatterElements (and the
// deprecated Scatter, which is ScatterElements without reduction). Negative indices count from
// the end; out-of-range indices throw BadInput.
#include <algorithm>
#include <cstring>

#include "kernels/common/axes.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

int64_t checked_index(int64_t idx, int64_t dim, const std::string& w) {
  if (idx < -dim || idx >= dim)
    throw_bad_input(w + ": index " + std::to_string(idx) + " out of range for a dim of size " + std::to_string(dim));
  return idx < 0 ? idx + dim : idx;
}

void copy_block(const Tensor& src, int64_t so, Tensor& dst, int64_t d, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DataType::String) {
    std::copy_n(src.string_data().begin() + so, count, dst.string_data().begin() + d);
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + d * es, static_cast<const char*>(src.raw()) + so * es,
              static_cast<size_t>(count) * es);
}

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(const KernelInfo& info) : axis_(info.n().attr_int("axis", 0)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    std::vector<int64_t> idx = int_list_input(required_input(ctx, 1), w, "indices");
    const Shape& ishape = ctx.input(1)->shape();
    const int64_t axis = normalize_axis(axis_, x.rank(), w);
    Shape out(x.shape().begin(), x.shape().begin() + axis);
    out.insert(out.end(), ishape.begin(), ishape.end());
    out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
    Tensor& y = ctx.output(0, out, x.dtype());
    const int64_t outer = dims_product(x.shape(), 0, axis), len = x.dim(static_cast<int>(axis)),
                  inner = dims_product(x.shape(), axis + 1, x.rank()), m = static_cast<int64_t>(idx.size());
    for (int64_t& i : idx) i = checked_index(i, len, w);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < m; ++j) copy_block(x, (o * len + idx[j]) * inner, y, (o * m + j) * inner, inner);
  }

 private:
  int64_t axis_;
};

class GatherElementsKernel : public Kernel {
 public:
  explicit GatherElementsKernel(const KernelInfo& info) : axis_(info.n().attr_int("axis", 0)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    const Tensor& it = required_input(ctx, 1);
    std::vector<int64_t> idx = int_list_input(it, w, "indices");
    const int rank = x.rank();
    if (it.rank() != rank) throw_bad_input(w + ": indices rank differs from data rank");
    const int64_t axis = normalize_axis(axis_, rank, w);
    for (int d = 0; d < rank; ++d)
      if (d != axis && it.dim(d) > x.dim(d)) throw_bad_input(w + ": indices dim " + std::to_string(d) + " exceeds the data's");
    Tensor& y = ctx.output(0, it.shape(), x.dtype());
    std::vector<int64_t> st = row_major_strides(x.shape()), counter(rank, 0);
    const int64_t n = it.numel();
    dispatch_by_size(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        int64_t off = 0;
        for (int d = 0; d < rank; ++d)
          off += (d == axis ? checked_index(idx[i], x.dim(d), w) : counter[d]) * st[d];
        py[i] = px[off];
        for (int d = rank - 1; d >= 0; --d) {
          if (++counter[d] < it.dim(d)) break;
          counter[d] = 0;
        }
      }
    });
  }

 private:
  int64_t axis_;
};

class GatherNDKernel : public Kernel {
 public:
  explicit GatherNDKernel(const KernelInfo& info) : batch_dims_(info.n().attr_int("batch_dims", 0)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    const Tensor& it = required_input(ctx, 1);
    std::vector<int64_t> idx = int_list_input(it, w, "indices");
    const int64_t b = batch_dims_, q = it.rank(), r = x.rank();
    if (q < 1 || b < 0 || b >= q || b >= r) throw_bad_input(w + ": bad batch_dims or indices rank");
    const int64_t k = it.dim(-1);
    if (k < 1 || b + k > r) throw_bad_input(w + ": indices' last dim is too large for the data rank");
    Shape out(it.shape().begin(), it.shape().end() - 1);
    out.insert(out.end(), x.shape().begin() + b + k, x.shape().end());
    Tensor& y = ctx.output(0, out, x.dtype());
    const int64_t batches = dims_product(it.shape(), 0, b);
    const int64_t per_batch = dims_product(it.shape(), b, q - 1);
    const int64_t slice = dims_product(x.shape(), b + k, r);
    const int64_t batch_stride = dims_product(x.shape(), b, r);
    std::vector<int64_t> st = row_major_strides(x.shape());
    for (int64_t bi = 0; bi < batches; ++bi)
      for (int64_t j = 0; j < per_batch; ++j) {
        const int64_t* tuple = idx.data() + (bi * per_batch + j) * k;
        int64_t off = bi * batch_stride;
        for (int64_t t = 0; t < k; ++t) off += checked_index(tuple[t], x.dim(static_cast<int>(b + t)), w) * st[b + t];
        copy_block(x, off, y, (bi * per_batch + j) * slice, slice);
      }
  }

 private:
  int64_t batch_dims_;
};

enum class Reduction { None, Add, Mul, Max, Min };

Reduction parse_reduction(const KernelInfo& info) {
  std::string s = info.n().attr_string("reduction", "none");
  if (s == "none") return Reduction::None;
  if (s == "add") return Reduction::Add;
  if (s == "mul") return Reduction::Mul;
  if (s == "max") return Reduction::Max;
  if (s == "min") return Reduction::Min;
  throw_bad_input(info.where() + ": unknown reduction '" + s + "'");
}

// Applies dst = reduce(dst, src) for count elements; the reduction picks the element arithmetic.
void combine(Reduction red, const Tensor& src, int64_t so, Tensor& dst, int64_t d, int64_t count, const std::string& w) {
  if (red == Reduction::None) {
    copy_block(src, so, dst, d, count);
    return;
  }
  dispatch_numeric(dst.dtype(), w, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ps = src.data<T>() + so;
    T* pd = dst.data<T>() + d;
    for (int64_t i = 0; i < count; ++i) {
      switch (red) {
        case Reduction::Add: pd[i] = static_cast<T>(pd[i] + ps[i]); break;
        case Reduction::Mul: pd[i] = static_cast<T>(pd[i] * ps[i]); break;
        case Reduction::Max: pd[i] = std::max(pd[i], ps[i]); break;
        case Reduction::Min: pd[i] = std::min(pd[i], ps[i]); break;
        case Reduction::None: break;
      }
    }
  });
}

class ScatterNDKernel : public Kernel {
 public:
  explicit ScatterNDKernel(const KernelInfo& info) : red_(parse_reduction(info)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    const Tensor& it = required_input(ctx, 1);
    const Tensor& upd = required_input(ctx, 2);
    std::vector<int64_t> idx = int_list_input(it, w, "indices");
    if (upd.dtype() != x.dtype()) throw_bad_input(w + ": updates type differs from data type");
    const int64_t q = it.rank(), r = x.rank();
    if (q < 1) throw_bad_input(w + ": indices must have rank >= 1");
    const int64_t k = it.dim(-1);
    if (k > r) throw_bad_input(w + ": indices' last dim exceeds the data rank");
    Shape want(it.shape().begin(), it.shape().end() - 1);
    want.insert(want.end(), x.shape().begin() + k, x.shape().end());
    if (upd.shape() != want) throw_bad_input(w + ": updates shape " + shape_str(upd.shape()) + " should be " + shape_str(want));
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    copy_block(x, 0, y, 0, x.numel());
    const int64_t m = dims_product(it.shape(), 0, q - 1), slice = dims_product(x.shape(), k, r);
    std::vector<int64_t> st = row_major_strides(x.shape());
    for (int64_t j = 0; j < m; ++j) {
      int64_t off = 0;
      for (int64_t t = 0; t < k; ++t) off += checked_index(idx[j * k + t], x.dim(static_cast<int>(t)), w) * st[t];
      combine(red_, upd, j * slice, y, off, slice, w);
    }
  }

 private:
  Reduction red_;
};

class ScatterElementsKernel : public Kernel {
 public:
  explicit ScatterElementsKernel(const KernelInfo& info)
      : axis_(info.n().attr_int("axis", 0)), red_(parse_reduction(info)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    const Tensor& it = required_input(ctx, 1);
    const Tensor& upd = required_input(ctx, 2);
    std::vector<int64_t> idx = int_list_input(it, w, "indices");
    const int rank = x.rank();
    if (upd.shape() != it.shape() || it.rank() != rank) throw_bad_input(w + ": indices and updates shapes differ");
    if (upd.dtype() != x.dtype()) throw_bad_input(w + ": updates type differs from data type");
    const int64_t axis = normalize_axis(axis_, rank, w);
    for (int d = 0; d < rank; ++d)
      if (d != axis && it.dim(d) > x.dim(d)) throw_bad_input(w + ": indices dim " + std::to_string(d) + " exceeds the data's");
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    copy_block(x, 0, y, 0, x.numel());
    std::vector<int64_t> st = row_major_strides(x.shape()), counter(rank, 0);
    const int64_t n = it.numel();
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) off += (d == axis ? checked_index(idx[i], x.dim(d), w) : counter[d]) * st[d];
      combine(red_, upd, i, y, off, 1, w);
      for (int d = rank - 1; d >= 0; --d) {
        if (++counter[d] < it.dim(d)) break;
        counter[d] = 0;
      }
    }
  }

 private:
  int64_t axis_;
  Reduction red_;
};

}  // namespace

void register_gather_kernels(KernelRegistry& r) {
  add_reference_kernel<GatherKernel>(r, "Gather");
  add_reference_kernel<GatherElementsKernel>(r, "GatherElements");
  add_reference_kernel<GatherNDKernel>(r, "GatherND");
}
void register_scatter_kernels(KernelRegistry& r) {
  add_reference_kernel<ScatterNDKernel>(r, "ScatterND");
  add_reference_kernel<ScatterElementsKernel>(r, "ScatterElements");
  add_reference_kernel<ScatterElementsKernel>(r, "Scatter");
}

}  // namespace fusor
