// Reference LSTM, GRU and RNN (ONNX opsets 7-14, including the opset-14 `layout` attribute).
//
// One kernel class runs all three cells: per direction, per time step, per batch element it forms
// the gate pre-activations x_t W^T + h_{t-1} R^T + Wb + Rb in double precision and applies the
// cell's equations exactly as the ONNX operator documents write them. Steps at or beyond a batch
// element's sequence_lens value produce zeros in Y and leave its state unchanged, so Y_h / Y_c
// hold the state after its last valid step (the first step for the reverse direction).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/register.h"

namespace fusor {

namespace {

enum class Cell { Lstm, Gru, Rnn };

// An activation function as named in the `activations` attribute, with its alpha/beta.
struct Activation {
  enum class Kind { Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus };
  Kind kind = Kind::Sigmoid;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case Kind::Relu: return std::max(0.0, x);
      case Kind::Tanh: return std::tanh(x);
      case Kind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
      case Kind::Affine: return alpha * x + beta;
      case Kind::LeakyRelu: return x >= 0 ? x : alpha * x;
      case Kind::ThresholdedRelu: return x > alpha ? x : 0.0;
      case Kind::ScaledTanh: return alpha * std::tanh(beta * x);
      case Kind::HardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
      case Kind::Elu: return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
      case Kind::Softsign: return x / (1.0 + std::fabs(x));
      case Kind::Softplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Parses `activations` with `activation_alpha` / `activation_beta`. Functions taking parameters
// consume the next alpha (and beta) in order, falling back to ONNX's defaults when the lists run
// out, as ONNX Runtime does.
std::vector<Activation> parse_activations(const Node& n, Cell cell, int num_dir, const std::string& where) {
  const Attribute* list = n.attr("activations");
  std::vector<std::string> names = list ? list->strings : std::vector<std::string>{};
  const int per_dir = cell == Cell::Lstm ? 3 : cell == Cell::Gru ? 2 : 1;
  if (names.empty()) {
    for (int d = 0; d < num_dir; ++d) {
      if (cell == Cell::Rnn) names.push_back("Tanh");
      else names.push_back("Sigmoid");
      if (cell != Cell::Rnn) names.push_back("Tanh");
      if (cell == Cell::Lstm) names.push_back("Tanh");
    }
  }
  if (static_cast<int>(names.size()) == per_dir && num_dir == 2) {
    const std::vector<std::string> one = names;  // (inserting a vector's own range into it is undefined)
    names.insert(names.end(), one.begin(), one.end());
  }
  if (static_cast<int>(names.size()) != per_dir * num_dir)
    throw_bad_input(where + ": activations lists " + std::to_string(names.size()) + " functions, expected " +
                    std::to_string(per_dir * num_dir));
  const std::vector<float> alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& raw : names) {
    std::string s;
    for (char c : raw) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    Activation a;
    using K = Activation::Kind;
    double da = 0, db = 0;
    int nargs = 0;
    if (s == "relu") a.kind = K::Relu;
    else if (s == "tanh") a.kind = K::Tanh;
    else if (s == "sigmoid") a.kind = K::Sigmoid;
    else if (s == "affine") { a.kind = K::Affine; da = 1; db = 0; nargs = 2; }
    else if (s == "leakyrelu") { a.kind = K::LeakyRelu; da = 0.01; nargs = 1; }
    else if (s == "thresholdedrelu") { a.kind = K::ThresholdedRelu; da = 1; nargs = 1; }
    else if (s == "scaledtanh") { a.kind = K::ScaledTanh; da = 1; db = 1; nargs = 2; }
    else if (s == "hardsigmoid") { a.kind = K::HardSigmoid; da = 0.2; db = 0.5; nargs = 2; }
    else if (s == "elu") { a.kind = K::Elu; da = 1; nargs = 1; }
    else if (s == "softsign") a.kind = K::Softsign;
    else if (s == "softplus") a.kind = K::Softplus;
    else throw_bad_input(where + ": unknown activation function '" + raw + "'");
    a.alpha = nargs >= 1 && ai < alphas.size() ? alphas[ai++] : da;
    a.beta = nargs >= 2 && bi < betas.size() ? betas[bi++] : db;
    out.push_back(a);
  }
  return out;
}

class RecurrentKernel : public Kernel {
 public:
  RecurrentKernel(const KernelInfo& info, Cell cell) : where_(info.where()), cell_(cell) {
    const Node& n = info.n();
    const std::string dir = n.attr_string("direction", "forward");
    if (dir == "forward") num_dir_ = 1, reverse_only_ = false;
    else if (dir == "reverse") num_dir_ = 1, reverse_only_ = true;
    else if (dir == "bidirectional") num_dir_ = 2, reverse_only_ = false;
    else throw_bad_input(where_ + ": unknown direction '" + dir + "'");
    hidden_ = n.attr_int("hidden_size", 0);
    layout_ = n.attr_int("layout", 0);
    if (layout_ != 0 && layout_ != 1) throw_bad_input(where_ + ": layout must be 0 or 1");
    const Attribute* clip = n.attr("clip");
    if (clip) clip_ = clip->f;
    if (clip && clip_ <= 0) throw_bad_input(where_ + ": clip must be positive");
    input_forget_ = n.attr_int("input_forget", 0) != 0;
    linear_before_reset_ = n.attr_int("linear_before_reset", 0) != 0;
    acts_ = parse_activations(n, cell, num_dir_, where_);
    gates_ = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const Tensor& r = required_input(ctx, 2);
    if (x.rank() != 3) throw_bad_input(where_ + ": X must be 3-D, got " + shape_str(x.shape()));
    const int64_t S = layout_ ? x.dim(1) : x.dim(0), B = layout_ ? x.dim(0) : x.dim(1), I = x.dim(2);
    const int64_t H = hidden_ > 0 ? hidden_ : r.dim(-1), G = gates_;
    check_shape(w, {num_dir_, G * H, I}, "W");
    check_shape(r, {num_dir_, G * H, H}, "R");
    const Tensor* bias = optional_input(ctx, 3);
    if (bias) check_shape(*bias, {num_dir_, 2 * G * H}, "B");
    const Tensor* lens = optional_input(ctx, 4);
    if (lens) {
      check_shape(*lens, {B}, "sequence_lens");
      for (int64_t b = 0; b < B; ++b)
        if (lens->as_int64(b) < 0 || lens->as_int64(b) > S)
          throw_bad_input(where_ + ": sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens->as_int64(b)) +
                          " is outside [0, " + std::to_string(S) + "]");
    }
    const Shape state_shape = layout_ ? Shape{B, num_dir_, H} : Shape{num_dir_, B, H};
    const Tensor* h0 = optional_input(ctx, 5);
    if (h0) check_shape(*h0, state_shape, "initial_h");
    const Tensor* c0 = cell_ == Cell::Lstm ? optional_input(ctx, 6) : nullptr;
    if (c0) check_shape(*c0, state_shape, "initial_c");
    const Tensor* peep = cell_ == Cell::Lstm ? optional_input(ctx, 7) : nullptr;
    if (peep) check_shape(*peep, {num_dir_, 3 * H}, "P");

    const Shape y_shape = layout_ ? Shape{B, S, num_dir_, H} : Shape{S, num_dir_, B, H};
    Tensor* y = ctx.num_outputs() > 0 && ctx.output_wanted(0) ? &ctx.output(0, y_shape, x.dtype()) : nullptr;
    Tensor* yh = ctx.num_outputs() > 1 && ctx.output_wanted(1) ? &ctx.output(1, state_shape, x.dtype()) : nullptr;
    Tensor* yc = cell_ == Cell::Lstm && ctx.num_outputs() > 2 && ctx.output_wanted(2) ? &ctx.output(2, state_shape, x.dtype()) : nullptr;

    // Scratch: h and c state (B*H each), gate pre-activations (G*H), and a GRU helper row (H).
    double* h = static_cast<double*>(ctx.scratch(sizeof(double) * (2 * B * H + G * H + H + 1)));
    double* c = h + B * H;
    double* gates = c + B * H;
    double* tmp = gates + G * H;

    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (w.dtype() != x.dtype() || r.dtype() != x.dtype()) throw_bad_input(where_ + ": W and R must have X's element type");
      const T* px = x.data<T>();
      auto x_at = [&](int64_t t, int64_t b) { return px + (layout_ ? (b * S + t) * I : (t * B + b) * I); };
      auto state_at = [&](int64_t d, int64_t b) { return layout_ ? (b * num_dir_ + d) * H : (d * B + b) * H; };
      auto y_at = [&](int64_t t, int64_t d, int64_t b) { return layout_ ? ((b * S + t) * num_dir_ + d) * H : ((t * num_dir_ + d) * B + b) * H; };
      if (y) std::fill(y->data<T>(), y->data<T>() + y->numel(), T(0));
      for (int64_t d = 0; d < num_dir_; ++d) {
        const bool reverse = reverse_only_ || d == 1;
        const T* wd = w.data<T>() + d * G * H * I;
        const T* rd = r.data<T>() + d * G * H * H;
        const Activation* act = acts_.data() + d * (cell_ == Cell::Lstm ? 3 : cell_ == Cell::Gru ? 2 : 1);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j) {
            h[b * H + j] = h0 ? h0->as_double(state_at(d, b) + j) : 0.0;
            c[b * H + j] = c0 ? c0->as_double(state_at(d, b) + j) : 0.0;
          }
        for (int64_t b = 0; b < B; ++b) {
          const int64_t len = lens ? lens->as_int64(b) : S;
          double* hb = h + b * H;
          double* cb = c + b * H;
          for (int64_t step = 0; step < len; ++step) {
            const int64_t t = reverse ? len - 1 - step : step;
            const T* xt = x_at(t, b);
            // gates[g*H + j] = x_t . W[g*H + j] + Wb[g*H + j] (+ h . R row + Rb except the GRU h gate)
            for (int64_t gj = 0; gj < G * H; ++gj) {
              double s = bias ? bias->as_double(d * 2 * G * H + gj) : 0.0;
              for (int64_t k = 0; k < I; ++k) s += static_cast<double>(xt[k]) * wd[gj * I + k];
              gates[gj] = s;
            }
            auto recur = [&](int64_t gj, const double* hv) {
              double s = bias ? bias->as_double(d * 2 * G * H + G * H + gj) : 0.0;
              for (int64_t k = 0; k < H; ++k) s += hv[k] * rd[gj * H + k];
              return s;
            };
            step_cell(d, H, act, hb, cb, gates, tmp, recur, peep);
            if (y)
              for (int64_t j = 0; j < H; ++j) y->data<T>()[y_at(t, d, b) + j] = static_cast<T>(hb[j]);
          }
        }
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j) {
            if (yh) yh->data<T>()[state_at(d, b) + j] = static_cast<T>(h[b * H + j]);
            if (yc) yc->data<T>()[state_at(d, b) + j] = static_cast<T>(c[b * H + j]);
          }
      }
    });
  }

 private:
  double clip(double v) const { return clip_ > 0 ? std::clamp(v, -clip_, clip_) : v; }

  // One step for one batch element with hidden size hs. `gates` holds the input projections plus Wb; recur(gj, h)
  // returns h . R[gj] + Rb[gj]. Updates h (and c) in place.
  template <typename Recur>
  void step_cell(int64_t d, int64_t hs, const Activation* act, double* h, double* c, double* gates, double* tmp,
                 Recur&& recur, const Tensor* peep) const {
    if (cell_ == Cell::Rnn) {
      for (int64_t j = 0; j < hs; ++j) tmp[j] = act[0](clip(gates[j] + recur(j, h)));
      std::copy(tmp, tmp + hs, h);
      return;
    }
    if (cell_ == Cell::Lstm) {
      // Gate order i, o, f, c; peephole order i, o, f.
      auto p = [&](int gate, int64_t j) { return peep ? peep->as_double(d * 3 * hs + gate * hs + j) : 0.0; };
      for (int64_t j = 0; j < hs; ++j) {
        const double gi = gates[j] + recur(j, h), go = gates[hs + j] + recur(hs + j, h);
        const double gf = gates[2 * hs + j] + recur(2 * hs + j, h), gc = gates[3 * hs + j] + recur(3 * hs + j, h);
        const double it = act[0](clip(gi + p(0, j) * c[j]));
        const double ft = input_forget_ ? 1.0 - it : act[0](clip(gf + p(2, j) * c[j]));
        const double ct = act[1](clip(gc));
        const double cn = ft * c[j] + it * ct;
        const double ot = act[0](clip(go + p(1, j) * cn));
        tmp[j] = cn;
        gates[j] = ot * act[2](cn);  // new h; gates[j] is no longer needed
      }
      for (int64_t j = 0; j < hs; ++j) {
        c[j] = tmp[j];
        h[j] = gates[j];
      }
      return;
    }
    // GRU, gate order z, r, h.
    for (int64_t j = 0; j < hs; ++j) {
      gates[j] = act[0](clip(gates[j] + recur(j, h)));             // z
      gates[hs + j] = act[0](clip(gates[hs + j] + recur(hs + j, h)));  // r
    }
    if (linear_before_reset_) {
      for (int64_t j = 0; j < hs; ++j) tmp[j] = gates[2 * hs + j] + gates[hs + j] * recur(2 * hs + j, h);
    } else {
      // (r . h) R_h^T: build r . h in tmp first, then project.
      for (int64_t j = 0; j < hs; ++j) tmp[j] = gates[hs + j] * h[j];
      for (int64_t j = 0; j < hs; ++j) gates[hs + j] = gates[2 * hs + j] + recur(2 * hs + j, tmp);
      std::copy(gates + hs, gates + 2 * hs, tmp);
    }
    for (int64_t j = 0; j < hs; ++j) {
      const double ht = act[1](clip(tmp[j]));
      h[j] = (1.0 - gates[j]) * ht + gates[j] * h[j];
    }
  }

  void check_shape(const Tensor& t, const Shape& want, const char* what) const {
    if (t.shape() != want)
      throw_bad_input(where_ + ": " + what + " has shape " + shape_str(t.shape()) + ", expected " + shape_str(want));
  }

  std::string where_;
  Cell cell_;
  int64_t num_dir_ = 1;
  bool reverse_only_ = false;
  int64_t hidden_ = 0;
  int64_t layout_ = 0;
  double clip_ = 0;
  bool input_forget_ = false, linear_before_reset_ = false;
  std::vector<Activation> acts_;
  int64_t gates_ = 1;
};

template <Cell cell>
void add_recurrent(KernelRegistry& r, const char* op) {
  r.add("", op, "reference", 0, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    return std::make_unique<RecurrentKernel>(info, cell);
  });
}

}  // namespace

void register_rnn_kernels(KernelRegistry& r) {
  add_recurrent<Cell::Lstm>(r, "LSTM");
  add_recurrent<Cell::Gru>(r, "GRU");
  add_recurrent<Cell::Rnn>(r, "RNN");
}

}  // namespace fusor
