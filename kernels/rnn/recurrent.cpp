// The fast LSTM, GRU and RNN (float, constant W and R, the default activations): per direction,
// the input projection of every time step is one GEMM on the prepacked Wᵀ with the combined
// biases as its epilogue; each step then adds h_{t-1} Rᵀ (Rᵀ prepacked row-major, a small
// register-blocked product over the batch rows) and applies the cell's gate equations vectorized
// over the hidden units (recurrent_kernels.h). Both directions of a bidirectional node run at
// once on two threads when they are worth it. Everything else (other activations, non-constant
// weights, other element types, and every malformed input, so the errors stay the reference's)
// goes to the reference kernel (kernels/reference/rnn.cpp), which the tests hold this one to.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/register.h"
#include "kernels/rnn/recurrent_kernels.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace rnn_detail {
const RecurrentKernels& recurrent_kernels(Isa isa) {
  switch (clamp_isa(isa)) {
    case Isa::Avx512: return recurrent_kernels_avx512();
    case Isa::Avx2: return recurrent_kernels_avx2();
    case Isa::Scalar: break;
  }
  return recurrent_kernels_scalar();
}
}  // namespace rnn_detail

namespace {

enum class Cell { Lstm, Gru, Rnn };

// Whether the node's `activations` are the defaults (then alpha/beta do not matter).
bool default_activations(const Node& n, Cell cell, int64_t num_dir) {
  const Attribute* list = n.attr("activations");
  if (!list) return true;
  const std::vector<std::string> want = cell == Cell::Lstm  ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
                                        : cell == Cell::Gru ? std::vector<std::string>{"sigmoid", "tanh"}
                                                            : std::vector<std::string>{"tanh"};
  const auto& names = list->strings;
  if (names.size() != want.size() && names.size() != want.size() * num_dir) return false;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string s;
    for (char c : names[i]) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s != want[i % want.size()]) return false;
  }
  return true;
}

class FastRecurrent final : public FastKernel {
 public:
  FastRecurrent(const KernelInfo& info, Cell cell) : FastKernel(info), cell_(cell) {
    const Node& n = info.n();
    const std::string dir = n.attr_string("direction", "forward");
    if (dir == "forward" || dir == "reverse") num_dir_ = 1;
    else if (dir == "bidirectional") num_dir_ = 2;
    else return;  // the reference reports it
    reverse_only_ = dir == "reverse";
    G_ = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
    layout_ = n.attr_int("layout", 0);
    const Attribute* clip = n.attr("clip");
    clip_ = clip ? clip->f : 0.0f;
    input_forget_ = n.attr_int("input_forget", 0) != 0;
    lbr_ = n.attr_int("linear_before_reset", 0) != 0;
    const Tensor* w = const_float(info, 1);
    const Tensor* r = const_float(info, 2);
    if ((layout_ != 0 && layout_ != 1) || (clip && clip_ <= 0) || !default_activations(n, cell, num_dir_) || !w ||
        !r || w->rank() != 3 || r->rank() != 3)
      return;
    H_ = r->dim(2);
    I_ = w->dim(2);
    const int64_t hidden = n.attr_int("hidden_size", 0);
    if (H_ <= 0 || (hidden > 0 && hidden != H_) || w->dim(0) != num_dir_ || r->dim(0) != num_dir_ ||
        w->dim(1) != G_ * H_ || r->dim(1) != G_ * H_)
      return;
    const int64_t GH = G_ * H_;
    for (int64_t d = 0; d < num_dir_; ++d) {
      const float* wd = w->data<float>() + d * GH * I_;
      const std::string dn = ".d" + std::to_string(d);
      if (I_ > 0) w_.emplace_back(MatrixRef{wd, I_, true}, I_, GH, std::nullopt, info.prepack, "wt" + dn);
      const float* rd = r->data<float>() + d * GH * H_;
      rt_.push_back(info.prepacked("rt" + dn, static_cast<size_t>(H_ * GH) * sizeof(float), [&](void* dst) {
        float* rt = static_cast<float*>(dst);
        for (int64_t j = 0; j < GH; ++j)
          for (int64_t k = 0; k < H_; ++k) rt[k * GH + j] = rd[j * H_ + k];
      }));
    }
    usable_ = I_ > 0;
  }

  void compute(KernelContext& ctx) override {
    if (!usable_ || !covered(ctx)) return fallback_->compute(ctx);
    const Tensor& x = *ctx.input(0);
    const int64_t S = layout_ ? x.dim(1) : x.dim(0), B = layout_ ? x.dim(0) : x.dim(1);
    const int64_t H = H_, GH = G_ * H_;
    const Tensor* bias = optional_input(ctx, 3);
    const Tensor* lens = optional_input(ctx, 4);
    const Tensor* h0 = optional_input(ctx, 5);
    const Tensor* c0 = cell_ == Cell::Lstm ? optional_input(ctx, 6) : nullptr;
    const Tensor* peep = cell_ == Cell::Lstm ? optional_input(ctx, 7) : nullptr;
    const Shape state_shape = layout_ ? Shape{B, num_dir_, H} : Shape{num_dir_, B, H};
    const Shape y_shape = layout_ ? Shape{B, S, num_dir_, H} : Shape{S, num_dir_, B, H};
    Tensor* y = ctx.num_outputs() > 0 && ctx.output_wanted(0) ? &ctx.output(0, y_shape, DataType::Float) : nullptr;
    Tensor* yh = ctx.num_outputs() > 1 && ctx.output_wanted(1) ? &ctx.output(1, state_shape, DataType::Float) : nullptr;
    Tensor* yc = cell_ == Cell::Lstm && ctx.num_outputs() > 2 && ctx.output_wanted(2)
                     ? &ctx.output(2, state_shape, DataType::Float)
                     : nullptr;
    std::vector<int64_t> len(static_cast<size_t>(B), S);
    bool uniform = true;
    if (lens)
      for (int64_t b = 0; b < B; ++b) {
        len[b] = lens->as_int64(b);
        uniform = uniform && len[b] == S;
      }
    if (y && !uniform) std::fill(y->data<float>(), y->data<float>() + y->numel(), 0.0f);

    // Per direction: xw (S*B x GH), gates (B x GH), h, c, rh (B x H each), biases (GH + H).
    auto up16 = [](int64_t v) { return (v + 15) / 16 * 16; };
    const int64_t per_dir = up16(S * B * GH) + up16(B * GH) + 3 * up16(B * H) + up16(GH) + up16(H);
    float* work = static_cast<float*>(ctx.scratch(sizeof(float) * static_cast<size_t>(per_dir * num_dir_)));
    const rnn_detail::RecurrentKernels& rk = rnn_detail::recurrent_kernels(w_[0].isa());
    const GemmRun run = gemm_run(ctx);

    auto run_dir = [&](int64_t d) {
      float* xw = work + d * per_dir;
      float* gates = xw + up16(S * B * GH);
      float* h = gates + up16(B * GH);
      float* c = h + up16(B * H);
      float* rh = c + up16(B * H);
      float* bx = rh + up16(B * H);
      float* rbh = bx + up16(GH);
      const bool reverse = reverse_only_ || d == 1;
      // Biases: Wb + Rb go into the input projection, except the GRU's Rb_h with
      // linear_before_reset, which stays inside r * (h R_hᵀ + Rb_h).
      const float* bd = bias ? bias->data<float>() + d * 2 * GH : nullptr;
      for (int64_t j = 0; j < GH; ++j) bx[j] = bd ? bd[j] + bd[GH + j] : 0.0f;
      const bool sep_rbh = cell_ == Cell::Gru && lbr_;
      if (sep_rbh)
        for (int64_t j = 0; j < H; ++j) {
          rbh[j] = bd ? bd[GH + 2 * H + j] : 0.0f;
          bx[2 * H + j] = bd ? bd[2 * H + j] : 0.0f;
        }
      Epilogue ep;
      ep.bias = bx;
      ep.bias_axis = BiasAxis::PerColumn;
      // X's rows are t * B + b (layout 0) or b * S + t (layout 1): xw keeps that order.
      gemm(S * B, MatrixRef{x.data<float>(), I_}, w_[d], xw, GH, ep, run);
      auto row_of = [&](int64_t t, int64_t b) { return layout_ ? b * S + t : t * B + b; };
      auto state_at = [&](int64_t b) { return layout_ ? (b * num_dir_ + d) * H : (d * B + b) * H; };
      auto y_at = [&](int64_t t, int64_t b) {
        return layout_ ? ((b * S + t) * num_dir_ + d) * H : ((t * num_dir_ + d) * B + b) * H;
      };
      for (int64_t b = 0; b < B; ++b) {
        if (h0) std::memcpy(h + b * H, h0->data<float>() + state_at(b), sizeof(float) * H);
        else std::fill(h + b * H, h + (b + 1) * H, 0.0f);
        if (c0) std::memcpy(c + b * H, c0->data<float>() + state_at(b), sizeof(float) * H);
        else std::fill(c + b * H, c + (b + 1) * H, 0.0f);
      }
      const float* rt = rt_[d].as<float>();
      const float* pd = peep ? peep->data<float>() + d * 3 * H : nullptr;
      for (int64_t step = 0; step < S; ++step) {
        auto t_of = [&](int64_t b) { return reverse ? len[b] - 1 - step : step; };
        for (int64_t b = 0; b < B; ++b) {
          if (step >= len[b]) continue;
          std::memcpy(gates + b * GH, xw + row_of(t_of(b), b) * GH, sizeof(float) * GH);
          if (sep_rbh) std::memcpy(gates + b * GH + 2 * H, rbh, sizeof(float) * H);
        }
        if (cell_ == Cell::Gru && !lbr_) {
          rk.gemv_acc(B, H, 2 * H, h, H, rt, GH, gates, GH);
          for (int64_t b = 0; b < B; ++b)
            if (step < len[b]) rk.gru_zr(H, gates + b * GH, h + b * H, rh + b * H, clip_);
          rk.gemv_acc(B, H, H, rh, H, rt + 2 * H, GH, gates + 2 * H, GH);
        } else {
          rk.gemv_acc(B, H, GH, h, H, rt, GH, gates, GH);
        }
        for (int64_t b = 0; b < B; ++b) {
          if (step >= len[b]) continue;
          float* g = gates + b * GH;
          float* hb = h + b * H;
          if (cell_ == Cell::Lstm) {
            rk.lstm_row(H, g, c + b * H, hb, pd, clip_, input_forget_);
          } else if (cell_ == Cell::Gru) {
            if (lbr_) rk.gru_zr(H, g, hb, nullptr, clip_);
            rk.gru_out(H, g, lbr_ ? xw + row_of(t_of(b), b) * GH + 2 * H : nullptr, hb, clip_);
          } else {
            rk.rnn_row(H, g, hb, clip_);
          }
          if (y) std::memcpy(y->data<float>() + y_at(t_of(b), b), hb, sizeof(float) * H);
        }
      }
      for (int64_t b = 0; b < B; ++b) {
        if (yh) std::memcpy(yh->data<float>() + state_at(b), h + b * H, sizeof(float) * H);
        if (yc) std::memcpy(yc->data<float>() + state_at(b), c + b * H, sizeof(float) * H);
      }
    };
    // The directions are independent: two threads when each is worth a fork-join (~20 flops/ns
    // for these small products).
    const double dir_ns = 2.0 * static_cast<double>(S * B * GH * (I_ + H)) / 20.0;
    ctx.threads().parallel_for_cost(num_dir_, dir_ns, [&](int64_t d0, int64_t d1) {
      for (int64_t d = d0; d < d1; ++d) run_dir(d);
    });
  }

 private:
  // Whether this call is one the fast path computes; anything else (including every error the
  // reference reports) goes to the reference kernel.
  bool covered(KernelContext& ctx) const {
    const Tensor* x = ctx.input(0);
    if (!x || x->dtype() != DataType::Float || x->rank() != 3 || x->dim(2) != I_) return false;
    const int64_t S = layout_ ? x->dim(1) : x->dim(0), B = layout_ ? x->dim(0) : x->dim(1);
    auto ok = [&](int i, const Shape& want) {
      const Tensor* t = ctx.num_inputs() > i ? ctx.input(i) : nullptr;
      return !t || (t->dtype() == DataType::Float && t->shape() == want);
    };
    const Shape state_shape = layout_ ? Shape{B, num_dir_, H_} : Shape{num_dir_, B, H_};
    if (!ok(3, {num_dir_, 2 * G_ * H_}) || !ok(5, state_shape)) return false;
    if (cell_ == Cell::Lstm && (!ok(6, state_shape) || !ok(7, {num_dir_, 3 * H_}))) return false;
    const Tensor* lens = ctx.num_inputs() > 4 ? ctx.input(4) : nullptr;
    if (lens) {
      if (lens->shape() != Shape{B} || (lens->dtype() != DataType::Int32 && lens->dtype() != DataType::Int64))
        return false;
      for (int64_t b = 0; b < B; ++b)
        if (lens->as_int64(b) < 0 || lens->as_int64(b) > S) return false;
    }
    return true;
  }

  Cell cell_;
  bool usable_ = false;
  int64_t num_dir_ = 1, G_ = 1, H_ = 0, I_ = 0, layout_ = 0;
  bool reverse_only_ = false, input_forget_ = false, lbr_ = false;
  float clip_ = 0.0f;
  std::vector<PackedB> w_;               // per direction: Wᵀ (I x G*H)
  std::vector<PrepackedBuffer> rt_;      // per direction: Rᵀ (H x G*H), row-major
};

template <Cell cell>
void add_fast_recurrent(KernelRegistry& r, const char* op) {
  r.add("", op, "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<FastRecurrent>(info, cell);
  });
}

}  // namespace

void register_fast_rnn_kernels(KernelRegistry& r) {
  add_fast_recurrent<Cell::Lstm>(r, "LSTM");
  add_fast_recurrent<Cell::Gru>(r, "GRU");
  add_fast_recurrent<Cell::Rnn>(r, "RNN");
}

}  // namespace fusor
