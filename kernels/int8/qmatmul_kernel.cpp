// The fast QMatMul (quantized result, with a residual or bias Z added in the epilogue when
// conv_scale is set: Z shaped like Y, or one value per column read by every row) and QMatMulFloat
// (float result) kernels on the int8 GEMM core. A constant 2-D B (weights) is packed once with its
// per-column constants; a B computed at run time (attention's Q x K^T and P x V) is packed per
// call, once per batch of B, batches broadcast as MatMul does. A of type int8 and anything the
// core does not cover (a Z of another shape, Z with a B computed at run time) run the reference.
#include <algorithm>
#include <cstring>

#include "kernels/common/broadcast.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/fused/activation.h"
#include "kernels/int8/qops.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

class FastQMatMul : public FastKernel {
 public:
  FastQMatMul(const KernelInfo& info, bool float_out)
      : FastKernel(info), float_out_(float_out), trans_b_(info.n().attr_int("transB", 0) != 0), isa_(active_int8_isa()) {
    const Node& n = info.n();
    x_ = {n.attr_float("x_scale", 1.0f), static_cast<int32_t>(n.attr_int("x_zero_point", 0))};
    if (!float_out) {
      y_ = {n.attr_float("y_scale", 1.0f), static_cast<int32_t>(n.attr_int("y_zero_point", 0))};
      activation_clamp(n, act_lo_, act_hi_);
      if (!(y_.scale > 0.0f)) return;
      residual_ = n.attr_float("conv_scale", 0.0f) != 0.0f;
      conv_ = {n.attr_float("conv_scale", 1.0f), static_cast<int32_t>(n.attr_int("conv_zero_point", 0))};
      z_ = {n.attr_float("z_scale", 1.0f), static_cast<int32_t>(n.attr_int("z_zero_point", 0))};
      if (residual_ && !(conv_.scale > 0.0f)) return;
    } else {
      act_ = fused::activation_of(n);
    }
    if (!(x_.scale > 0.0f)) return;
    if (info.input_types.empty() || !info.input_types[0] || info.input_types[0]->elem != DataType::UInt8) return;
    const auto& c = info.const_inputs;
    auto cin = [&](size_t i) -> const Tensor* { return i < c.size() && c[i] ? c[i].get() : nullptr; };
    const Tensor *b = cin(1), *bs = cin(2), *bz = cin(3), *bias = cin(4), *bias_s = cin(5);
    if (!bs || (node_has_input(info, 3) && !bz)) return;
    if (node_has_input(info, 4) && (!bias || (!float_out && !bias_s))) return;
    b_scale_.assign(bs->numel(), 0.0f);
    for (int64_t i = 0; i < bs->numel(); ++i) b_scale_[i] = static_cast<float>(bs->as_double(i));
    if (bz) {
      for (int64_t i = 0; i < bz->numel(); ++i) b_zero_.push_back(static_cast<int32_t>(bz->as_int64(i)));
      if (b_zero_.size() != b_scale_.size()) return;
    }
    if (bias) {
      for (int64_t i = 0; i < bias->numel(); ++i) bias_.push_back(bias->as_double(i));
      if (bias_s)
        for (int64_t i = 0; i < bias_s->numel(); ++i) bias_scale_.push_back(static_cast<float>(bias_s->as_double(i)));
    }
    ok_ = true;
    if (b && is_8bit(b->dtype()) && b->rank() == 2) {
      const int64_t K = trans_b_ ? b->dim(1) : b->dim(0), N = trans_b_ ? b->dim(0) : b->dim(1);
      if (!columns_ok(N)) {
        ok_ = false;
        return;
      }
      packed_ = QPackedB(b->raw(), b->dtype() == DataType::Int8, K, N, b->dim(1), trans_b_, isa_);
      const_cols_ = column_constants(packed_, col_offset_, col_bzero_, need_row_sums_);
      mult_add(N, mult_, add_);
    } else if (trans_b_) {
      ok_ = false;  // transB is defined for a 2-D B only
    }
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    if (!ok_ || a.dtype() != DataType::UInt8 || a.rank() < 1) return fallback_->compute(ctx);
    if (residual_ && packed_.empty()) return fallback_->compute(ctx);  // Z with a B computed at run time
    if (!packed_.empty()) return compute_const(ctx, a);
    const Tensor& b = required_input(ctx, 1);
    if (!is_8bit(b.dtype()) || a.rank() < 2 || b.rank() < 2) return fallback_->compute(ctx);
    compute_dynamic(ctx, a, b);
  }

 private:
  bool columns_ok(int64_t N) const {
    auto fits = [N](size_t n) { return n == 1 || static_cast<int64_t>(n) == N; };
    return fits(b_scale_.size()) && (b_zero_.empty() || fits(b_zero_.size())) && (bias_.empty() || static_cast<int64_t>(bias_.size()) == N) &&
           (bias_scale_.empty() || fits(bias_scale_.size()));
  }
  float bscale(int64_t n) const { return b_scale_[b_scale_.size() == 1 ? 0 : n]; }
  int32_t bzero(int64_t n) const { return b_zero_.empty() ? 0 : b_zero_[b_zero_.size() == 1 ? 0 : n]; }

  // col_offset = integer bias - a_zero * colsum + K * a_zero * b'; returns whether the bias went into
  // the integer domain (else mult_add puts it into add).
  bool column_constants(const QPackedB& pb, std::vector<int32_t>& off, std::vector<int32_t>& bzs, bool& rows) const {
    const int64_t N = pb.n(), K = pb.k();
    off.assign(static_cast<size_t>(N), 0);
    bzs.assign(static_cast<size_t>(N), 0);
    rows = false;
    for (int64_t n = 0; n < N; ++n) {
      bzs[n] = bzero(n) - pb.shift();
      rows = rows || bzs[n] != 0;
      off[n] = -x_.zero_point * pb.col_sums()[n] + static_cast<int32_t>(K) * x_.zero_point * bzs[n];
      if (int_bias(n)) off[n] += static_cast<int32_t>(bias_[n]);
    }
    return true;
  }
  bool int_bias(int64_t n) const {
    return !bias_.empty() && !float_out_ && bias_scale_[bias_scale_.size() == 1 ? 0 : n] == x_.scale * bscale(n);
  }
  void mult_add(int64_t N, std::vector<float>& mult, std::vector<float>& add) const {
    mult.assign(static_cast<size_t>(N), 0.0f);
    add.assign(static_cast<size_t>(N), 0.0f);
    for (int64_t n = 0; n < N; ++n) {
      const float real = x_.scale * bscale(n);
      if (float_out_) {
        mult[n] = real;
        add[n] = bias_.empty() ? 0.0f : static_cast<float>(bias_[n]);
      } else {
        // The product's own quantization: y, or the intermediate one with a residual Z.
        const QParam& out = residual_ ? conv_ : y_;
        mult[n] = real / out.scale;
        add[n] = static_cast<float>(out.zero_point);
        if (!bias_.empty() && !int_bias(n))
          add[n] += static_cast<float>(bias_[n]) * bias_scale_[bias_scale_.size() == 1 ? 0 : n] / out.scale;
      }
    }
  }
  QEpilogue epilogue() const {
    QEpilogue e;
    if (float_out_) {
      e.out = QEpilogue::Out::F32;
      e.act = act_;
    } else {
      e.out = QEpilogue::Out::U8;
      auto bound = [&](float v, int32_t dflt) {
        if (v <= -1.0e38f || v >= 1.0e38f) return dflt;
        return static_cast<int32_t>(std::clamp(std::nearbyint(v / y_.scale) + y_.zero_point, 0.0f, 255.0f));
      };
      e.qmin = bound(act_lo_, 0);
      e.qmax = bound(act_hi_, 255);
      if (residual_) {
        // y = round((t - cz) * cs / ys + (z - zz) * zs / ys) + yz, t the product quantized at conv_.
        e.res_t = conv_.scale / y_.scale;
        e.res_z = z_.scale / y_.scale;
        e.res_c = static_cast<float>(y_.zero_point) - static_cast<float>(conv_.zero_point) * e.res_t -
                  static_cast<float>(z_.zero_point) * e.res_z;
        e.cmin = 0;
        e.cmax = 255;
      }
    }
    return e;
  }
  // A's rows as the core reads them (kp bytes each) and their sums when B has zero points.
  const uint8_t* rows_of(KernelContext& ctx, const uint8_t* a, int64_t M, int64_t K, int64_t kp, bool sums,
                         int32_t*& row_sums) const {
    const uint8_t* out = a;
    if (kp != K) {
      auto* p = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(M * kp)));
      qgemm_pack_rows(a, K, M, K, kp, p);
      out = p;
    }
    row_sums = nullptr;
    if (sums) {
      row_sums = static_cast<int32_t*>(ctx.scratch(static_cast<size_t>(M) * 4));
      qgemm_row_sums(a, K, M, K, row_sums);
    }
    return out;
  }

  void compute_const(KernelContext& ctx, const Tensor& a) {
    const int64_t K = packed_.k(), N = packed_.n();
    if (a.dim(-1) != K) return fallback_->compute(ctx);
    const int64_t M = a.numel() / std::max<int64_t>(K, 1);
    Shape out = a.shape();
    out.back() = N;
    // Z shaped like Y (a residual), or one value per column (a bias Add): rows ld apart, 0 for the
    // one row every row reads.
    const Tensor* z = residual_ ? optional_input(ctx, 6) : nullptr;
    int64_t z_ld = 0;
    if (residual_) {
      if (!z || z->dtype() != DataType::UInt8) return fallback_->compute(ctx);
      if (z->shape() == out) {
        z_ld = N;
      } else if (!(z->rank() >= 1 && z->numel() == N && z->dim(-1) == N)) {
        return fallback_->compute(ctx);
      }
    }
    Tensor& y = ctx.output(0, out, float_out_ ? DataType::Float : DataType::UInt8);
    int32_t* sums = nullptr;
    const uint8_t* rows = rows_of(ctx, a.data<uint8_t>(), M, K, packed_.kp(), need_row_sums_, sums);
    QEpilogue e = epilogue();
    e.col_offset = col_offset_.data();
    e.mult = mult_.data();
    e.add = add_.data();
    if (sums) {
      e.row_sums = sums;
      e.col_bzero = col_bzero_.data();
    }
    if (z) {
      e.residual = z->data<uint8_t>();
      e.residual_ld = z_ld;
    }
    qgemm(packed_, rows, packed_.kp(), M, y.raw(), N, e, &ctx.threads());
  }

  void compute_dynamic(KernelContext& ctx, const Tensor& a, const Tensor& b) {
    const int64_t M = a.dim(-2), K = a.dim(-1), N = b.dim(-1);
    if (b.dim(-2) != K || !columns_ok(N)) return fallback_->compute(ctx);
    const Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
    const Shape ob = broadcast_shapes({ab, bb}, ctx.where());
    Shape out = ob;
    out.push_back(M);
    out.push_back(N);
    Tensor& y = ctx.output(0, out, float_out_ ? DataType::Float : DataType::UInt8);
    const int64_t batches = shape_numel(ob), a_batches = shape_numel(ab), b_batches = shape_numel(bb);
    if (batches == 0 || M == 0 || N == 0) return;
    const int64_t kp = (K + 3) / 4 * 4;
    // Each batch of B packed once, with its column constants.
    const int64_t pbytes = (QPackedB::storage_bytes(K, N, isa_) + 63) / 64 * 64;
    auto* store = static_cast<int8_t*>(ctx.scratch(static_cast<size_t>(b_batches * pbytes)));
    auto* sums = static_cast<int32_t*>(ctx.scratch(static_cast<size_t>(b_batches * N * 3) * 4));
    std::vector<QPackedB> packs(static_cast<size_t>(b_batches));
    std::vector<float> mult, add;
    mult_add(N, mult, add);
    const bool b_signed = b.dtype() == DataType::Int8;
    const auto* bdata = static_cast<const uint8_t*>(b.raw());
    bool rows_needed = false;
    for (int64_t i = 0; i < b_batches; ++i) {
      int32_t* cs = sums + i * N * 3;
      packs[i] = QPackedB(bdata + i * K * N, b_signed, K, N, N, false, isa_, store + i * pbytes, cs);
      std::vector<int32_t> off, bzs;
      bool rows = false;
      column_constants(packs[i], off, bzs, rows);
      std::memcpy(cs + N, off.data(), static_cast<size_t>(N) * 4);
      std::memcpy(cs + 2 * N, bzs.data(), static_cast<size_t>(N) * 4);
      rows_needed = rows_needed || rows;
    }
    // A's rows per batch of A (padded to kp, with sums when needed).
    const auto* adata = a.data<uint8_t>();
    const uint8_t* arows = adata;
    if (kp != K) {
      auto* p = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(a_batches * M * kp)));
      qgemm_pack_rows(adata, K, a_batches * M, K, kp, p);
      arows = p;
    }
    int32_t* asums = nullptr;
    if (rows_needed) {
      asums = static_cast<int32_t*>(ctx.scratch(static_cast<size_t>(a_batches * M) * 4));
      qgemm_row_sums(adata, K, a_batches * M, K, asums);
    }
    std::vector<int64_t> a_off(static_cast<size_t>(batches)), b_off(static_cast<size_t>(batches));
    BroadcastIndex it(ob, {ab, bb});
    for (int64_t i = 0; i < batches; ++i, it.next()) {
      a_off[i] = it.offset(0);
      b_off[i] = it.offset(1);
    }
    const QEpilogue base = epilogue();
    const size_t esize = float_out_ ? 4 : 1;
    auto body = [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int32_t* cs = sums + b_off[t] * N * 3;
        QEpilogue e = base;
        e.col_offset = cs + N;
        e.mult = mult.data();
        e.add = add.data();
        if (rows_needed) {
          e.row_sums = asums + a_off[t] * M;
          e.col_bzero = cs + 2 * N;
        }
        qgemm_rows(packs[b_off[t]], arows + a_off[t] * M * kp, kp, M,
                   static_cast<char*>(y.raw()) + t * M * N * static_cast<int64_t>(esize), N, e);
      }
    };
    if (batches > 1) {
      ctx.threads().parallel_for(batches, body, 1);
    } else {
      qgemm(packs[0], arows, kp, M, y.raw(), N,
            [&] {
              QEpilogue e = base;
              e.col_offset = sums + N;
              e.mult = mult.data();
              e.add = add.data();
              if (rows_needed) {
                e.row_sums = asums;
                e.col_bzero = sums + 2 * N;
              }
              return e;
            }(),
            &ctx.threads());
    }
  }

  bool ok_ = false, float_out_, trans_b_;
  Int8Isa isa_;
  QParam x_, y_, conv_, z_;
  bool residual_ = false;
  float act_lo_ = -3.0e38f, act_hi_ = 3.0e38f;
  ActivationSpec act_;
  std::vector<float> b_scale_, bias_scale_;
  std::vector<int32_t> b_zero_;
  std::vector<double> bias_;
  QPackedB packed_;
  bool const_cols_ = false, need_row_sums_ = false;
  std::vector<int32_t> col_offset_, col_bzero_;
  std::vector<float> mult_, add_;
};

}  // namespace

void register_int8_matmul_kernels(KernelRegistry& r) {
  r.add(kFusorDomain, "QMatMul", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastQMatMul>(i, false); });
  r.add(kFusorDomain, "QMatMulFloat", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastQMatMul>(i, true); });
}

}  // namespace fusor::int8
