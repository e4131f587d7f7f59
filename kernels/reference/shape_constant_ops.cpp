// Shape-producing and constant reference kernels: Shape (start/end) Size ConstantOfShape Range
// EyeLike Constant.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

class ShapeKernel : public Kernel {
 public:
  explicit ShapeKernel(const KernelInfo& info) {
    const Attribute* e = info.n().attr("end");
    start_ = info.n().attr_int("start", 0);
    has_end_ = e != nullptr;
    end_ = e ? e->i : 0;
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const int64_t r = x.rank();
    auto clampi = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    const int64_t s = clampi(start_), e = has_end_ ? clampi(end_) : r;
    const int64_t n = std::max<int64_t>(0, e - s);
    Tensor& y = ctx.output(0, {n}, DataType::Int64);
    for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = x.shape()[s + i];
  }

 private:
  int64_t start_ = 0, end_ = 0;
  bool has_end_ = false;
};

class SizeKernel : public Kernel {
 public:
  explicit SizeKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    *ctx.output(0, {}, DataType::Int64).data<int64_t>() = x.numel();
  }
};

// Fills a tensor with the single element of `value` (any fixed-size type).
void fill_with(Tensor& y, const Tensor& value) {
  const size_t es = dtype_size(value.dtype());
  char* p = static_cast<char*>(y.raw());
  const char* v = static_cast<const char*>(value.raw());
  const int64_t n = y.numel();
  for (int64_t i = 0; i < n; ++i) std::memcpy(p + i * es, v, es);
}

class ConstantOfShapeKernel : public Kernel {
 public:
  explicit ConstantOfShapeKernel(const KernelInfo& info) {
    const Attribute* a = info.n().attr("value");
    if (a && a->t) {
      if (a->t->numel() != 1) throw_bad_input(info.where() + ": value must hold one element");
      value_ = *a->t;
    } else {
      value_ = Tensor::scalar<float>(0.0f);
    }
  }
  void compute(KernelContext& ctx) override {
    Shape s = int_list_input(required_input(ctx, 0), ctx.where(), "shape");
    for (int64_t d : s)
      if (d < 0) throw_bad_input(ctx.where() + ": negative dim in shape");
    Tensor& y = ctx.output(0, s, value_.dtype());
    fill_with(y, value_);
  }

 private:
  Tensor value_;
};

class RangeKernel : public Kernel {
 public:
  explicit RangeKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& start = required_input(ctx, 0);
    const Tensor& limit = required_input(ctx, 1);
    const Tensor& delta = required_input(ctx, 2);
    const std::string w = ctx.where();
    if (start.dtype() != limit.dtype() || start.dtype() != delta.dtype()) throw_bad_input(w + ": inputs differ in type");
    if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1) throw_bad_input(w + ": inputs must be scalars");
    dispatch_numeric(start.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T s = start.data<T>()[0], l = limit.data<T>()[0], d = delta.data<T>()[0];
      if (d == T(0)) throw_bad_input(w + ": delta is 0");
      const double count = std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
      if (!(count < 4e12)) {
        if (count > 0 || std::isnan(count)) throw_bad_input(w + ": Range would have " + std::to_string(count) + " elements");
      }
      const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
      Tensor& y = ctx.output(0, {n}, start.dtype());
      T* py = y.data<T>();
      T v = s;
      for (int64_t i = 0; i < n; ++i, v = wrap_add(v, d)) py[i] = v;
    });
  }
};

class EyeLikeKernel : public Kernel {
 public:
  explicit EyeLikeKernel(const KernelInfo& info) : k_(info.n().attr_int("k", 0)) {
    const Attribute* a = info.n().attr("dtype");
    dtype_ = a ? static_cast<DataType>(a->i) : DataType::Undefined;
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    if (x.rank() != 2) throw_bad_input(w + ": input must be 2-D");
    DataType dt = dtype_ == DataType::Undefined ? x.dtype() : dtype_;
    Tensor& y = ctx.output(0, x.shape(), dt);
    dispatch_numeric_bool(dt, w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      const int64_t rows = x.dim(0), cols = x.dim(1);
      std::fill(py, py + rows * cols, T(0));
      for (int64_t i = 0; i < rows; ++i)
        if (i + k_ >= 0 && i + k_ < cols) py[i * cols + i + k_] = T(1);
    });
  }

 private:
  int64_t k_;
  DataType dtype_;
};

// Constant: value (tensor), value_float(s), value_int(s), value_string(s); built once.
class ConstantKernel : public Kernel {
 public:
  explicit ConstantKernel(const KernelInfo& info) {
    const Node& n = info.n();
    if (const Attribute* a = n.attr("value"); a && a->t) value_ = *a->t;
    else if (const Attribute* a = n.attr("value_float")) value_ = Tensor::scalar<float>(a->f);
    else if (const Attribute* a = n.attr("value_int")) value_ = Tensor::scalar<int64_t>(a->i);
    else if (const Attribute* a = n.attr("value_floats")) value_ = Tensor::from_vector<float>({static_cast<int64_t>(a->floats.size())}, a->floats);
    else if (const Attribute* a = n.attr("value_ints")) value_ = Tensor::from_vector<int64_t>({static_cast<int64_t>(a->ints.size())}, a->ints);
    else if (const Attribute* a = n.attr("value_string")) value_ = Tensor::strings({}, {a->s});
    else if (const Attribute* a = n.attr("value_strings")) value_ = Tensor::strings({static_cast<int64_t>(a->strings.size())}, a->strings);
    else throw_bad_input(info.where() + ": no supported value attribute (sparse_value is not supported)");
  }
  void compute(KernelContext& ctx) override {
    Tensor& y = ctx.output(0, value_.shape(), value_.dtype());
    if (value_.dtype() == DataType::String) y.string_data() = value_.string_data();
    else if (value_.nbytes()) std::memcpy(y.raw(), value_.raw(), value_.nbytes());
  }

 private:
  Tensor value_;
};

}  // namespace

void register_shape_kernels(KernelRegistry& r) {
  add_reference_kernel<ShapeKernel>(r, "Shape");
  add_reference_kernel<SizeKernel>(r, "Size");
  add_reference_kernel<ConstantOfShapeKernel>(r, "ConstantOfShape");
  add_reference_kernel<RangeKernel>(r, "Range");
  add_reference_kernel<EyeLikeKernel>(r, "EyeLike");
}
void register_constant_kernels(KernelRegistry& r) { add_reference_kernel<ConstantKernel>(r, "Constant"); }

}  // namespace fusor
