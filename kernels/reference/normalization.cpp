// Reference normalizations: BatchNormalization, InstanceNormalization, LayerNormalization, LRN,
// MeanVarianceNormalization. Statistics are accumulated in double.
#include <algorithm>
#include <cmath>

#include "kernels/common/axes.h"
#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/nn_families.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

// A per-channel parameter (scale, bias, mean, var) of C values, read as double.
const Tensor& channel_param(KernelContext& ctx, int i, int64_t channels, const char* what, const std::string& where) {
  const Tensor& t = required_input(ctx, i);
  if (t.numel() != channels || t.rank() > 1)
    throw_bad_input(where + ": " + what + " has shape " + shape_str(t.shape()) + ", expected " + std::to_string(channels));
  if (!dtype_is_float(t.dtype())) throw_bad_input(where + ": " + what + " must be a float tensor");
  return t;
}

void check_nc(const Tensor& x, const std::string& where) {
  if (x.rank() < 2) throw_bad_input(where + ": input must have rank >= 2 (N, C, ...), got " + shape_str(x.shape()));
}

// Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (axis 1). With training_mode=1
// (opset 14+) mean and var are the batch statistics, and the optional outputs running_mean and
// running_var are input_mean * momentum + batch_mean * (1 - momentum) (same for var, population
// variance), as ONNX specifies.
class BatchNormKernel : public Kernel {
 public:
  explicit BatchNormKernel(const KernelInfo& info)
      : where_(info.where()),
        epsilon_(info.n().attr_float("epsilon", 1e-5f)),
        momentum_(info.n().attr_float("momentum", 0.9f)),
        training_(info.opset >= 14 && info.n().attr_int("training_mode", 0) != 0) {
    if (info.n().attr_int("spatial", 1) == 0)
      throw_bad_input(where_ + ": spatial=0 is not supported");
  }

  // Every output element is written after all the inputs it depends on were read (same-index or
  // whole-line/channel passes), so Y may share X's buffer.
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    check_nc(x, where_);
    const int64_t N = x.dim(0), C = x.dim(1), S = x.numel() / std::max<int64_t>(1, N * C);
    const Tensor& scale = channel_param(ctx, 1, C, "scale", where_);
    const Tensor& bias = channel_param(ctx, 2, C, "B", where_);
    const Tensor& mean = channel_param(ctx, 3, C, "input_mean", where_);
    const Tensor& var = channel_param(ctx, 4, C, "input_var", where_);
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    // Training mode: this run's (mean, variance) per channel.
    double* batch_stats = training_ ? static_cast<double*>(ctx.scratch(sizeof(double) * 2 * std::max<int64_t>(1, C))) : nullptr;
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ctx.threads().parallel_for_cost(C, 2.0 * static_cast<double>(N * S), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          double m = mean.as_double(c), v = var.as_double(c);
          if (training_) {
            double s = 0, sq = 0;
            for (int64_t n = 0; n < N; ++n)
              for (int64_t i = 0; i < S; ++i) s += px[(n * C + c) * S + i];
            const double cnt = static_cast<double>(N * S);
            const double bm = s / cnt;
            for (int64_t n = 0; n < N; ++n)
              for (int64_t i = 0; i < S; ++i) {
                const double d = px[(n * C + c) * S + i] - bm;
                sq += d * d;
              }
            m = bm;
            v = sq / cnt;
          }
          // y = x * k + (b - m * k), coefficients in double, the per-element FMA in T.
          const double k = scale.as_double(c) / std::sqrt(v + epsilon_), b = bias.as_double(c);
          const T kt = static_cast<T>(k), bt = static_cast<T>(b - m * k);
          for (int64_t n = 0; n < N; ++n) {
            const T* xs = px + (n * C + c) * S;
            T* ys = py + (n * C + c) * S;
            for (int64_t i = 0; i < S; ++i) ys[i] = xs[i] * kt + bt;
          }
          if (training_) {
            batch_stats[2 * c] = m;
            batch_stats[2 * c + 1] = v;
          }
        }
      });
    });
    if (training_) write_running_stats(ctx, mean, var, batch_stats, C);
  }

 private:
    // running stat = input stat * momentum + batch stat * (1 - momentum), for outputs 1 and 2.
  void write_running_stats(KernelContext& ctx, const Tensor& mean, const Tensor& var, const double* batch_stats,
                           int64_t C) const {
    for (int out = 1; out <= 2 && out < ctx.num_outputs(); ++out) {
      if (!ctx.output_wanted(out)) continue;
      const Tensor& in = out == 1 ? mean : var;
      Tensor& t = ctx.output(out, in.shape(), in.dtype());
      dispatch_float(in.dtype(), where_, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t c = 0; c < C; ++c)
          t.data<T>()[c] = static_cast<T>(in.as_double(c) * momentum_ + batch_stats[2 * c + out - 1] * (1.0 - momentum_));
      });
    }
  }

  std::string where_;
  float epsilon_, momentum_;
  bool training_;
};

// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], statistics per (n, c) over spatial axes.
class InstanceNormKernel : public Kernel {
 public:
  explicit InstanceNormKernel(const KernelInfo& info)
      : where_(info.where()), epsilon_(info.n().attr_float("epsilon", 1e-5f)) {}

  // Every output element is written after all the inputs it depends on were read (same-index or
  // whole-line/channel passes), so Y may share X's buffer.
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    check_nc(x, where_);
    const int64_t N = x.dim(0), C = x.dim(1), S = x.numel() / std::max<int64_t>(1, N * C);
    const Tensor& scale = channel_param(ctx, 1, C, "scale", where_);
    const Tensor& bias = channel_param(ctx, 2, C, "B", where_);
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ctx.threads().parallel_for_cost(N * C, 3.0 * static_cast<double>(S), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t c = p % C;
          const T* xp = px + p * S;
          double s = 0, sq = 0;
          for (int64_t i = 0; i < S; ++i) s += xp[i];
          const double m = s / static_cast<double>(S);
          for (int64_t i = 0; i < S; ++i) sq += (xp[i] - m) * (xp[i] - m);
          const double k = scale.as_double(c) / std::sqrt(sq / static_cast<double>(S) + epsilon_);
          const double b = bias.as_double(c);
          for (int64_t i = 0; i < S; ++i) py[p * S + i] = static_cast<T>((xp[i] - m) * k + b);
        }
      });
    });
  }

 private:
  std::string where_;
  float epsilon_;
};

// Expands a parameter that broadcasts (unidirectionally) to `inner` into `inner_size` doubles.
void expand_param(const Tensor& t, const Shape& inner, double* out, const char* what, const std::string& where) {
  if (!broadcasts_to(t.shape(), inner))
    throw_bad_input(where + ": " + what + " of shape " + shape_str(t.shape()) + " does not broadcast to " + shape_str(inner));
  const int64_t n = shape_numel(inner);
  if (t.numel() == n) {
    for (int64_t i = 0; i < n; ++i) out[i] = t.as_double(i);
    return;
  }
  BroadcastIndex it(inner, {t.shape()});
  for (int64_t i = 0; i < n; ++i, it.next()) out[i] = t.as_double(it.offset(0));
}

// LayerNormalization (opset 17): normalizes over axes [axis, rank). Optional outputs Mean and
// InvStdDev have X's shape with the normalized axes set to 1, element type float (stash_type 1).
class LayerNormKernel : public Kernel {
 public:
  explicit LayerNormKernel(const KernelInfo& info)
      : where_(info.where()), axis_(info.n().attr_int("axis", -1)), epsilon_(info.n().attr_float("epsilon", 1e-5f)) {}

  // Every output element is written after all the inputs it depends on were read (same-index or
  // whole-line/channel passes), so Y may share X's buffer.
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& scale = required_input(ctx, 1);
    const Tensor* bias = optional_input(ctx, 2);
    const int64_t axis = normalize_axis(axis_, x.rank(), where_);
    const Shape inner_shape(x.shape().begin() + axis, x.shape().end());
    const int64_t outer = dims_product(x.shape(), 0, axis), inner = shape_numel(inner_shape);
    double* sc = static_cast<double*>(ctx.scratch(sizeof(double) * 2 * std::max<int64_t>(1, inner)));
    double* bi = sc + inner;
    expand_param(scale, inner_shape, sc, "Scale", where_);
    if (bias) expand_param(*bias, inner_shape, bi, "B", where_);
    else std::fill(bi, bi + inner, 0.0);
    Shape stat_shape = x.shape();
    for (int d = static_cast<int>(axis); d < x.rank(); ++d) stat_shape[d] = 1;
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    float* mean_out = ctx.num_outputs() > 1 && ctx.output_wanted(1) ? ctx.output(1, stat_shape, DataType::Float).data<float>() : nullptr;
    float* inv_out = ctx.num_outputs() > 2 && ctx.output_wanted(2) ? ctx.output(2, stat_shape, DataType::Float).data<float>() : nullptr;
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ctx.threads().parallel_for_cost(outer, 2.0 * static_cast<double>(inner), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* xr = px + r * inner;
          double s = 0, sq = 0;
          for (int64_t i = 0; i < inner; ++i) s += xr[i];
          const double m = s / static_cast<double>(inner);
          for (int64_t i = 0; i < inner; ++i) sq += (xr[i] - m) * (xr[i] - m);
          const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + epsilon_);
          for (int64_t i = 0; i < inner; ++i) py[r * inner + i] = static_cast<T>((xr[i] - m) * inv * sc[i] + bi[i]);
          if (mean_out) mean_out[r] = static_cast<float>(m);
          if (inv_out) inv_out[r] = static_cast<float>(inv);
        }
      });
    });
  }

 private:
  std::string where_;
  int64_t axis_;
  float epsilon_;
};

// LRN across channels: y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta,
// window [c - floor((size-1)/2), c + ceil((size-1)/2)].
class LrnKernel : public Kernel {
 public:
  explicit LrnKernel(const KernelInfo& info)
      : where_(info.where()),
        size_(info.n().attr_int("size", 0)),
        alpha_(info.n().attr_float("alpha", 1e-4f)),
        beta_(info.n().attr_float("beta", 0.75f)),
        bias_(info.n().attr_float("bias", 1.0f)) {
    if (size_ <= 0) throw_bad_input(where_ + ": attribute size must be a positive integer");
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    check_nc(x, where_);
    const int64_t N = x.dim(0), C = x.dim(1), S = x.numel() / std::max<int64_t>(1, N * C);
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ctx.threads().parallel_for_cost(N * C, 3.0 * static_cast<double>(S), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t n = p / C, c = p % C;
          const int64_t cb = std::max<int64_t>(0, c - lo), ce = std::min(C - 1, c + hi);
          for (int64_t i = 0; i < S; ++i) {
            double sq = 0;
            for (int64_t k = cb; k <= ce; ++k) {
              const double v = px[(n * C + k) * S + i];
              sq += v * v;
            }
            const double v = px[p * S + i];
            py[p * S + i] = static_cast<T>(v / std::pow(bias_ + alpha_ / static_cast<double>(size_) * sq, beta_));
          }
        }
      });
    });
  }

 private:
  std::string where_;
  int64_t size_;
  float alpha_, beta_, bias_;
};

// MeanVarianceNormalization: (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9) over `axes`
// (default {0, 2, 3}), as ONNX's function body defines it.
class MvnKernel : public Kernel {
 public:
  explicit MvnKernel(const KernelInfo& info) : where_(info.where()), axes_(info.n().attr_ints("axes", {0, 2, 3})) {}

  // Every output element is written after all the inputs it depends on were read (same-index or
  // whole-line/channel passes), so Y may share X's buffer.
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::vector<int64_t> axes = normalize_axes(axes_, x.rank(), where_);
    Shape kept = x.shape();
    for (int64_t a : axes) kept[a] = 1;
    const int64_t nk = shape_numel(kept), n = x.numel();
    double* stats = static_cast<double*>(ctx.scratch(sizeof(double) * 2 * std::max<int64_t>(1, nk)));
    std::fill(stats, stats + 2 * nk, 0.0);
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    if (n == 0) return;
    const double count = static_cast<double>(n / nk);
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      BroadcastIndex it(x.shape(), {kept});
      for (int64_t i = 0; i < n; ++i, it.next()) {
        stats[2 * it.offset(0)] += px[i];
        stats[2 * it.offset(0) + 1] += static_cast<double>(px[i]) * px[i];
      }
      for (int64_t k = 0; k < nk; ++k) {
        const double m = stats[2 * k] / count, ex2 = stats[2 * k + 1] / count;
        stats[2 * k] = m;
        stats[2 * k + 1] = std::sqrt(std::max(0.0, ex2 - m * m)) + 1e-9;
      }
      BroadcastIndex jt(x.shape(), {kept});
      for (int64_t i = 0; i < n; ++i, jt.next())
        py[i] = static_cast<T>((px[i] - stats[2 * jt.offset(0)]) / stats[2 * jt.offset(0) + 1]);
    });
  }

 private:
  std::string where_;
  std::vector<int64_t> axes_;
};

}  // namespace

void register_nn_norm_kernels(KernelRegistry& r) {
  add_reference_kernel<BatchNormKernel>(r, "BatchNormalization");
  add_reference_kernel<InstanceNormKernel>(r, "InstanceNormalization");
  add_reference_kernel<LayerNormKernel>(r, "LayerNormalization");
  add_reference_kernel<LrnKernel>(r, "LRN");
  add_reference_kernel<MvnKernel>(r, "MeanVarianceNormalization");
}

}  // namespace fusor
