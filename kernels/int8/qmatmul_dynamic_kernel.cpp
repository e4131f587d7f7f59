// The fast fusor.MatMulIntegerToFloat kernel (dynamic quantization: A's scale and zero point are
// inputs computed at run time by DynamicQuantizeLinear) on the int8 GEMM core. A constant 2-D B is
// packed once with its column sums; each call turns A's zero point and scale into the N column
// constants (col_offset, mult) and runs the GEMM with a float epilogue:
//     y[m, n] = act(float(sum_k (A[m,k] - a)(B[k,n] - b[n])) * (AScale * BScale[n]) + Bias[n])
// The product AScale * BScale[n] is the float product the unfused graph's Mul computes, and the
// int32 sum is exact, so without a bias the result is the unfused graph's to the bit. Anything else
// (B computed at run time or not 2-D, int8 A, scales that are not one value or one per column)
// runs the reference.
#include <algorithm>
#include <vector>

#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/fused/activation.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/qops.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

class FastMatMulIntegerToFloat : public FastKernel {
 public:
  explicit FastMatMulIntegerToFloat(const KernelInfo& info)
      : FastKernel(info), act_(fused::activation_of(info.n())), isa_(active_int8_isa()) {
    if (info.input_types.empty() || !info.input_types[0] || info.input_types[0]->elem != DataType::UInt8) return;
    const auto& c = info.const_inputs;
    auto cin = [&](size_t i) -> const Tensor* { return i < c.size() && c[i] ? c[i].get() : nullptr; };
    const Tensor *b = cin(1), *bs = cin(3), *bz = cin(5), *bias = cin(6);
    if (!b || !is_8bit(b->dtype()) || b->rank() != 2 || !bs || bs->dtype() != DataType::Float || bs->rank() > 1) return;
    if ((node_has_input(info, 5) && (!bz || bz->dtype() != b->dtype() || bz->rank() > 1)) ||
        (node_has_input(info, 6) && (!bias || bias->dtype() != DataType::Float || bias->rank() != 1)))
      return;
    const int64_t K = b->dim(0), N = b->dim(1);
    auto per_column = [N](const Tensor* t) { return !t || t->numel() == 1 || t->numel() == N; };
    if (!per_column(bs) || !per_column(bz) || (bias && bias->numel() != N) || K == 0 || N == 0) return;
    b_scale_.resize(static_cast<size_t>(N));
    bias_.assign(static_cast<size_t>(N), 0.0f);
    packed_ = QPackedB(b->raw(), b->dtype() == DataType::Int8, K, N, N, false, isa_);
    col_bzero_.resize(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      b_scale_[n] = bs->data<float>()[bs->numel() == 1 ? 0 : n];
      const int32_t z = bz ? static_cast<int32_t>(bz->as_int64(bz->numel() == 1 ? 0 : n)) : 0;
      col_bzero_[n] = z - packed_.shift();
      need_row_sums_ = need_row_sums_ || col_bzero_[n] != 0;
      if (bias) bias_[n] = bias->data<float>()[n];
    }
    ok_ = true;
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& as = required_input(ctx, 2);
    const Tensor* az = optional_input(ctx, 4);
    const int64_t K = packed_.k(), N = packed_.n();
    if (!ok_ || a.dtype() != DataType::UInt8 || a.rank() < 1 || a.dim(-1) != K || as.dtype() != DataType::Float ||
        as.numel() != 1 || (az && (az->dtype() != DataType::UInt8 || az->numel() != 1)))
      return fallback_->compute(ctx);
    const float a_scale = as.data<float>()[0];
    const int32_t a_zero = az ? az->data<uint8_t>()[0] : 0;
    const int64_t M = a.numel() / K;
    Shape out = a.shape();
    out.back() = N;
    Tensor& y = ctx.output(0, out, DataType::Float);
    if (M == 0) return;
    // The column constants of this call's A parameters (QEpilogue; qgemm.h has the algebra).
    auto* off = static_cast<int32_t*>(ctx.scratch(static_cast<size_t>(N) * sizeof(int32_t)));
    auto* mult = static_cast<float*>(ctx.scratch(static_cast<size_t>(N) * sizeof(float)));
    const int32_t* sums = packed_.col_sums();
    for (int64_t n = 0; n < N; ++n) {
      off[n] = -a_zero * sums[n] + static_cast<int32_t>(K) * a_zero * col_bzero_[n];
      mult[n] = a_scale * b_scale_[n];
    }
    const uint8_t* rows = a.data<uint8_t>();
    const int64_t kp = packed_.kp();
    if (kp != K) {
      auto* p = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(M * kp)));
      qgemm_pack_rows(rows, K, M, K, kp, p);
      rows = p;
    }
    QEpilogue e;
    e.out = QEpilogue::Out::F32;
    e.act = act_;
    e.col_offset = off;
    e.mult = mult;
    e.add = bias_.data();
    if (need_row_sums_) {
      auto* rs = static_cast<int32_t*>(ctx.scratch(static_cast<size_t>(M) * sizeof(int32_t)));
      qgemm_row_sums(a.data<uint8_t>(), K, M, K, rs);
      e.row_sums = rs;
      e.col_bzero = col_bzero_.data();
    }
    qgemm(packed_, rows, kp, M, y.raw(), N, e, &ctx.threads());
  }

 private:
  bool ok_ = false, need_row_sums_ = false;
  ActivationSpec act_;
  Int8Isa isa_;
  QPackedB packed_;
  std::vector<float> b_scale_, bias_;
  std::vector<int32_t> col_bzero_;
};

}  // namespace

void register_int8_dynamic_matmul_kernels(KernelRegistry& r) {
  r.add(kFusorDomain, "MatMulIntegerToFloat", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastMatMulIntegerToFloat>(i); });
}

}  // namespace fusor::int8
