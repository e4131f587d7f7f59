// Reference MatMul and Gemm: plain row-by-row loops, the yardstick for the fast GEMM path.
#include <algorithm>
#include <cstring>

#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/matmul_shape.h"
#include "kernels/reference/nn_families.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

// Element types MatMul and Gemm accept (ONNX: float16 aside, the numeric types of 32/64 bits).
template <typename F>
decltype(auto) dispatch_matmul(DataType t, const std::string& where, F&& f) {
  switch (t) {
    case DataType::Float: return f(Tag<float>{});
    case DataType::Double: return f(Tag<double>{});
    case DataType::Int32: return f(Tag<int32_t>{});
    case DataType::Int64: return f(Tag<int64_t>{});
    case DataType::UInt32: return f(Tag<uint32_t>{});
    case DataType::UInt64: return f(Tag<uint64_t>{});
    default: throw_unsupported_dtype(where, t);
  }
}

// y[m, n] = sum_k a[m*sa_m + k*sa_k] * b[k*sb_k + n*sb_n] for rows [m0, m1).
template <typename T>
void matmul_rows(const T* a, int64_t sa_m, int64_t sa_k, const T* b, int64_t sb_k, int64_t sb_n, T* y,
                 int64_t m0, int64_t m1, int64_t K, int64_t N) {
  for (int64_t m = m0; m < m1; ++m) {
    T* yr = y + m * N;
    for (int64_t n = 0; n < N; ++n) yr[n] = T(0);
    for (int64_t k = 0; k < K; ++k) {
      const T av = a[m * sa_m + k * sa_k];
      const T* br = b + k * sb_k;
      for (int64_t n = 0; n < N; ++n) yr[n] += av * br[n * sb_n];
    }
  }
}

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const KernelInfo& info) : where_(info.where()) {}

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    if (a.dtype() != b.dtype())
      throw_bad_input(where_ + ": A is " + dtype_name(a.dtype()) + " but B is " + dtype_name(b.dtype()));
    const MatMulShape s = matmul_shape(a.shape(), b.shape(), where_);
    Tensor& y = ctx.output(0, s.out, a.dtype());
    dispatch_matmul(a.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* py = y.data<T>();
      const int64_t rows = s.batch_count() * s.M;
      ctx.threads().parallel_for(rows, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1;) {
          const int64_t bi = r / s.M, m0 = r % s.M, m1 = std::min(s.M, m0 + (r1 - r));
          matmul_rows(pa + s.a_matrix(bi) * s.M * s.K, s.K, 1, pb + s.b_matrix(bi) * s.K * s.N, s.N, 1,
                      py + bi * s.M * s.N, m0, m1, s.K, s.N);
          r += m1 - m0;
        }
      }, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, s.K * s.N)));
    });
  }

 private:
  std::string where_;
};

// Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast to (M, N).
class GemmKernel : public Kernel {
 public:
  explicit GemmKernel(const KernelInfo& info)
      : where_(info.where()),
        trans_a_(info.n().attr_int("transA", 0) != 0),
        trans_b_(info.n().attr_int("transB", 0) != 0),
        alpha_(info.n().attr_float("alpha", 1.0f)),
        beta_(info.n().attr_float("beta", 1.0f)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const Tensor* c = optional_input(ctx, 2);
    if (a.rank() != 2 || b.rank() != 2)
      throw_bad_input(where_ + ": A and B must be 2-D, got " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
    if (a.dtype() != b.dtype() || (c && c->dtype() != a.dtype()))
      throw_bad_input(where_ + ": inputs have different element types");
    const int64_t M = trans_a_ ? a.dim(1) : a.dim(0), K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t N = trans_b_ ? b.dim(0) : b.dim(1), Kb = trans_b_ ? b.dim(1) : b.dim(0);
    if (K != Kb)
      throw_bad_input(where_ + ": inner dimensions differ: A " + shape_str(a.shape()) + (trans_a_ ? " (transposed)" : "") +
                      ", B " + shape_str(b.shape()) + (trans_b_ ? " (transposed)" : ""));
    const Shape out{M, N};
    if (c && !broadcasts_to(c->shape(), out))
      throw_bad_input(where_ + ": C of shape " + shape_str(c->shape()) + " does not broadcast to " + shape_str(out));
    Tensor& y = ctx.output(0, out, a.dtype());
    dispatch_matmul(a.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* py = y.data<T>();
      const int64_t sa_m = trans_a_ ? 1 : K, sa_k = trans_a_ ? M : 1;
      const int64_t sb_k = trans_b_ ? 1 : N, sb_n = trans_b_ ? K : 1;
      const T alpha = static_cast<T>(alpha_), beta = static_cast<T>(beta_);
      // Strides of C over (M, N); 0 along broadcast dims.
      int64_t sc_m = 0, sc_n = 0;
      if (c) {
        const Shape& cs = c->shape();
        if (cs.size() == 2) { sc_m = cs[0] == 1 ? 0 : cs[1]; sc_n = cs[1] == 1 ? 0 : 1; }
        if (cs.size() == 1) sc_n = cs[0] == 1 ? 0 : 1;
      }
      const T* pc = c ? c->data<T>() : nullptr;
      ctx.threads().parallel_for(M, [&](int64_t m0, int64_t m1) {
        matmul_rows(pa, sa_m, sa_k, pb, sb_k, sb_n, py, m0, m1, K, N);
        for (int64_t m = m0; m < m1; ++m)
          for (int64_t n = 0; n < N; ++n) {
            T v = alpha * py[m * N + n];
            if (pc) v += beta * pc[m * sc_m + n * sc_n];
            py[m * N + n] = v;
          }
      }, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, K * N)));
    });
  }

 private:
  std::string where_;
  bool trans_a_, trans_b_;
  float alpha_, beta_;
};

}  // namespace

void register_nn_matmul_kernels(KernelRegistry& r) {
  add_reference_kernel<MatMulKernel>(r, "MatMul");
  add_reference_kernel<GemmKernel>(r, "Gemm");
}

}  // namespace fusor
