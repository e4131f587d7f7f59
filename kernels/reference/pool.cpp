// Reference pooling: MaxPool (with Indices), AveragePool, LpPool and their Global forms.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/common/conv_params.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/conv_ref.h"
#include "kernels/reference/nn_families.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

// Calls visit(in_offset) for every tap of the window at output coordinates `o` that lies inside
// X (row-major tap order), and returns how many taps lie inside the padded extent
// [-pad_begin, in + pad_end) on every axis (AveragePool's count_include_pad divisor).
// Per axis, the taps inside X form a contiguous index range [lo, hi), so the walk is a box.
// `box` is caller-provided storage for 3 * nd values.
template <typename Visit>
int64_t visit_window(const ConvParams& p, const std::vector<int64_t>& o, int64_t* box, Visit&& visit) {
  const int nd = p.nd;
  int64_t* lo = box;
  int64_t* hi = box + nd;
  int64_t* k = box + 2 * nd;
  int64_t padded_count = 1;
  bool empty = false;
  for (int d = 0; d < nd; ++d) {
    const int64_t start = o[d] * p.strides[d] - p.pad_begin[d], dil = p.dilations[d];
    // taps t with 0 <= start + t * dil < in
    lo[d] = start >= 0 ? 0 : (-start + dil - 1) / dil;
    hi[d] = start > p.in[d] - 1 ? 0 : std::min(p.kernel[d], (p.in[d] - 1 - start) / dil + 1);
    if (lo[d] >= hi[d]) empty = true;
    // taps with -pad_begin <= start + t * dil < in + pad_end
    const int64_t plo = start >= -p.pad_begin[d] ? 0 : (-p.pad_begin[d] - start + dil - 1) / dil;
    const int64_t plim = p.in[d] + p.pad_end[d] - 1 - start;
    const int64_t phi = plim < 0 ? 0 : std::min(p.kernel[d], plim / dil + 1);
    padded_count *= std::max<int64_t>(0, phi - plo);
  }
  if (empty) return padded_count;
  for (int d = 0; d < nd; ++d) k[d] = lo[d];
  const int last = nd - 1;
  const int64_t last_start = o[last] * p.strides[last] - p.pad_begin[last], last_dil = p.dilations[last];
  for (;;) {
    int64_t row = 0;
    for (int d = 0; d < last; ++d) row = row * p.in[d] + o[d] * p.strides[d] - p.pad_begin[d] + k[d] * p.dilations[d];
    row *= p.in[last];
    for (int64_t t = lo[last]; t < hi[last]; ++t) visit(row + last_start + t * last_dil);
    int d = last - 1;
    for (; d >= 0; --d) {
      if (++k[d] < hi[d]) break;
      k[d] = lo[d];
    }
    if (d < 0) break;
  }
  return padded_count;
}

// Spatial offset `off` (row-major) of an N-d plane re-expressed column-major (storage_order=1).
int64_t column_major_offset(int64_t off, const Shape& dims) {
  int64_t out = 0, stride = 1;
  std::vector<int64_t> c(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    c[d] = off % dims[d];
    off /= dims[d];
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    out += c[d] * stride;
    stride *= dims[d];
  }
  return out;
}

template <typename F>
decltype(auto) dispatch_maxpool(DataType t, const std::string& where, F&& f) {
  switch (t) {
    case DataType::Float: return f(Tag<float>{});
    case DataType::Double: return f(Tag<double>{});
    case DataType::Int8: return f(Tag<int8_t>{});
    case DataType::UInt8: return f(Tag<uint8_t>{});
    default: throw_unsupported_dtype(where, t);
  }
}

class MaxPoolKernel : public Kernel {
 public:
  explicit MaxPoolKernel(const KernelInfo& info)
      : attrs_(WindowAttrs::parse(info.n(), WindowKind::Pool)),
        storage_order_(info.n().attr_int("storage_order", 0)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const ConvParams p = pool_params(attrs_, x.shape());
    const Shape out_shape = p.output_shape();
    Tensor& y = ctx.output(0, out_shape, x.dtype());
    int64_t* idx = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) idx = ctx.output(1, out_shape, DataType::Int64).data<int64_t>();
    dispatch_maxpool(x.dtype(), attrs_.where, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      const int64_t is = p.in_spatial_size(), os = p.out_spatial_size();
      ctx.threads().parallel_for(p.batch * p.in_channels, [&](int64_t c0, int64_t c1) {
        std::vector<int64_t> o(p.nd), box(3 * p.nd);
        for (int64_t c = c0; c < c1; ++c) {
          const T* xc = px + c * is;
          std::fill(o.begin(), o.end(), 0);
          for (int64_t op = 0; op < os; ++op, next_coord(o, p.out)) {
            T best = std::numeric_limits<T>::lowest();
            int64_t best_off = -1;
            visit_window(p, o, box.data(), [&](int64_t off) {
              if (best_off < 0 || xc[off] > best) { best = xc[off]; best_off = off; }
            });
            py[c * os + op] = best;
            if (idx) {
              const int64_t sp = best_off < 0 ? 0 : storage_order_ ? column_major_offset(best_off, p.in) : best_off;
              idx[c * os + op] = c * is + sp;
            }
          }
        }
      });
    });
  }

 private:
  WindowAttrs attrs_;
  int64_t storage_order_;
};

// AveragePool (mode Average) and LpPool (mode Lp) share the window walk.
class AvgLpPoolKernel : public Kernel {
 public:
  enum class Mode { Average, Lp };
  AvgLpPoolKernel(const KernelInfo& info, Mode mode)
      : attrs_(WindowAttrs::parse(info.n(), WindowKind::Pool)),
        mode_(mode),
        count_include_pad_(info.n().attr_int("count_include_pad", 0) != 0),
        p_(lp_order(info)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const ConvParams p = pool_params(attrs_, x.shape());
    Tensor& y = ctx.output(0, p.output_shape(), x.dtype());
    dispatch_float(x.dtype(), attrs_.where, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      const int64_t is = p.in_spatial_size(), os = p.out_spatial_size();
      ctx.threads().parallel_for(p.batch * p.in_channels, [&](int64_t c0, int64_t c1) {
        std::vector<int64_t> o(p.nd), box(3 * p.nd);
        for (int64_t c = c0; c < c1; ++c) {
          const T* xc = px + c * is;
          std::fill(o.begin(), o.end(), 0);
          for (int64_t op = 0; op < os; ++op, next_coord(o, p.out)) {
            double sum = 0;
            int64_t inside = 0;
            const int64_t padded = visit_window(p, o, box.data(), [&](int64_t off) {
              ++inside;
              sum += mode_ == Mode::Lp ? std::pow(std::fabs(static_cast<double>(xc[off])), p_) : xc[off];
            });
            double v;
            if (mode_ == Mode::Lp) v = std::pow(sum, 1.0 / p_);
            else v = sum / static_cast<double>(count_include_pad_ ? padded : inside);
            py[c * os + op] = static_cast<T>(v);
          }
        }
      });
    });
  }

 private:
  static double lp_order(const KernelInfo& info) {
    const Attribute* a = info.n().attr("p");
    if (!a) return 2.0;
    return a->kind == AttrKind::Float ? a->f : static_cast<double>(a->i);
  }

  WindowAttrs attrs_;
  Mode mode_;
  bool count_include_pad_;
  double p_;
};

// GlobalAveragePool / GlobalMaxPool / GlobalLpPool: one window covering all spatial axes.
class GlobalPoolKernel : public Kernel {
 public:
  enum class Mode { Average, Max, Lp };
  GlobalPoolKernel(const KernelInfo& info, Mode mode) : where_(info.where()), mode_(mode) {
    const Attribute* a = info.n().attr("p");
    if (a) p_ = a->kind == AttrKind::Float ? a->f : static_cast<double>(a->i);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (x.rank() < 2) throw_bad_input(where_ + ": input must have rank >= 2, got " + shape_str(x.shape()));
    Shape out = x.shape();
    for (int d = 2; d < x.rank(); ++d) out[d] = 1;
    Tensor& y = ctx.output(0, out, x.dtype());
    const int64_t planes = x.dim(0) * x.dim(1), size = x.numel() / std::max<int64_t>(1, planes);
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ctx.threads().parallel_for(planes, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          const T* xc = px + c * size;
          double acc = mode_ == Mode::Max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t i = 0; i < size; ++i) {
            if (mode_ == Mode::Max) acc = std::max(acc, static_cast<double>(xc[i]));
            else if (mode_ == Mode::Lp) acc += std::pow(std::fabs(static_cast<double>(xc[i])), p_);
            else acc += xc[i];
          }
          if (mode_ == Mode::Average) acc /= static_cast<double>(size);
          if (mode_ == Mode::Lp) acc = std::pow(acc, 1.0 / p_);
          py[c] = static_cast<T>(acc);
        }
      });
    });
  }

 private:
  std::string where_;
  Mode mode_;
  double p_ = 2.0;
};

template <class K, typename K::Mode mode>
void add_mode_kernel(KernelRegistry& r, const char* op) {
  r.add("", op, "reference", 0, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    return std::make_unique<K>(info, mode);
  });
}

}  // namespace

void register_nn_pool_kernels(KernelRegistry& r) {
  add_reference_kernel<MaxPoolKernel>(r, "MaxPool");
  add_mode_kernel<AvgLpPoolKernel, AvgLpPoolKernel::Mode::Average>(r, "AveragePool");
  add_mode_kernel<AvgLpPoolKernel, AvgLpPoolKernel::Mode::Lp>(r, "LpPool");
  add_mode_kernel<GlobalPoolKernel, GlobalPoolKernel::Mode::Average>(r, "GlobalAveragePool");
  add_mode_kernel<GlobalPoolKernel, GlobalPoolKernel::Mode::Max>(r, "GlobalMaxPool");
  add_mode_kernel<GlobalPoolKernel, GlobalPoolKernel::Mode::Lp>(r, "GlobalLpPool");
}

}  // namespace fusor
