// If, Loop and Scan: the body runs through KernelContext::run_subgraph (the executor's nested
// plan for the subgraph, created once per session; captured outer values resolved there).
#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/common/kernel_util.h"
#include "kernels/register.h"

namespace fusor {

namespace {

const Graph& graph_attr(const KernelInfo& info, const char* name) {
  const Attribute* a = info.n().attr(name);
  if (!a || a->kind != AttrKind::Graph || !a->g) throw_bad_input(info.where() + ": missing graph attribute '" + name + "'");
  return *a->g;
}

bool scalar_true(const Tensor& t, const std::string& where, const char* what) {
  if (t.numel() != 1) throw_bad_input(where + ": " + what + " must have one element, got shape " + shape_str(t.shape()));
  if (t.dtype() == DataType::Bool) return t.data<bool>()[0];
  return t.as_double(0) != 0;
}

// A body's output as the node's output i: tensors are copied into the node's output; sequences
// and empty optionals (immutable, outside the arena) are handed over as they are.
void copy_to_output(KernelContext& ctx, int i, const Tensor& src) {
  if (!ctx.output_wanted(i)) return;
  if (!src.is_plain()) {
    ctx.set_value(i, src);
    return;
  }
  Tensor& out = ctx.output(i, src.shape(), src.dtype());
  if (src.dtype() == DataType::String)
    out.string_data() = src.string_data();
  else if (src.nbytes())
    std::memcpy(out.raw(), src.raw(), src.nbytes());
}

// Stacks equally shaped tensors along a new axis `axis` of the result (reversed when `reverse`).
void stack_to_output(KernelContext& ctx, int i, const std::vector<Tensor>& parts, int64_t axis, bool reverse,
                     const ValueType* declared) {
  if (!ctx.output_wanted(i)) return;
  const int64_t n = static_cast<int64_t>(parts.size());
  if (n == 0) {
    // No iterations: the element shape is what the model declares, when it does.
    Shape s{0};
    DataType dt = declared && declared->elem != DataType::Undefined ? declared->elem : DataType::Float;
    if (declared && declared->has_shape && declared->rank() >= 1) {
      s.clear();
      for (const Dim& d : declared->dims) s.push_back(d.is_known() ? d.value : 0);
      s[axis < 0 ? 0 : std::min<int64_t>(axis, static_cast<int64_t>(s.size()) - 1)] = 0;
    }
    ctx.output(i, s, dt);
    return;
  }
  const Tensor& first = parts[0];
  for (const Tensor& p : parts)
    if (p.shape() != first.shape() || p.dtype() != first.dtype())
      throw_bad_input(ctx.where() + ": scan output " + std::to_string(i) + " changes shape across iterations (" +
                      shape_str(first.shape()) + " then " + shape_str(p.shape()) + ")");
  if (first.dtype() == DataType::String) throw_bad_input(ctx.where() + ": string scan outputs are not supported");
  const int64_t rank = first.rank() + 1;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) throw_bad_input(ctx.where() + ": scan output axis out of range");
  Shape shape = first.shape();
  shape.insert(shape.begin() + axis, n);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first.shape()[d];
  for (int64_t d = axis; d < first.rank(); ++d) inner *= first.shape()[d];
  const size_t esz = dtype_size(first.dtype());
  Tensor& out = ctx.output(i, shape, first.dtype());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t t = 0; t < n; ++t) {
    int64_t pos = reverse ? n - 1 - t : t;
    const char* src = static_cast<const char*>(parts[t].raw());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + ((o * n + pos) * inner) * esz, src + o * inner * esz, inner * esz);
  }
}

// Slice `index` of `t` along `axis`, with that axis removed.
Tensor take_slice(const Tensor& t, int64_t axis, int64_t index) {
  Shape shape = t.shape();
  const int64_t len = shape[axis];
  shape.erase(shape.begin() + axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.shape()[d];
  for (int64_t d = axis + 1; d < t.rank(); ++d) inner *= t.shape()[d];
  const size_t esz = dtype_size(t.dtype());
  Tensor out(t.dtype(), shape);
  const char* src = static_cast<const char*>(t.raw());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + o * inner * esz, src + ((o * len + index) * inner) * esz, inner * esz);
  return out;
}

// Equally shaped tensors stacked along a new leading axis, into a new tensor.
Tensor stack_front(const std::vector<Tensor>& parts, const std::string& where) {
  const Tensor& first = parts.at(0);
  Shape shape = first.shape();
  shape.insert(shape.begin(), static_cast<int64_t>(parts.size()));
  Tensor out(first.dtype(), shape);
  char* dst = static_cast<char*>(out.raw());
  for (const Tensor& p : parts) {
    if (p.shape() != first.shape() || p.dtype() != first.dtype())
      throw_bad_input(where + ": body outputs change shape across iterations");
    std::memcpy(dst, p.raw(), p.nbytes());
    dst += p.nbytes();
  }
  return out;
}

class IfKernel : public Kernel {
 public:
  explicit IfKernel(const KernelInfo& info)
      : then_(graph_attr(info, "then_branch")), else_(graph_attr(info, "else_branch")) {}
  void compute(KernelContext& ctx) override {
    bool cond = scalar_true(required_input(ctx, 0), ctx.where(), "cond");
    const Graph& branch = cond ? then_ : else_;
    std::vector<Tensor> outs = ctx.run_subgraph(branch, {});
    if (static_cast<int>(outs.size()) != ctx.num_outputs())
      throw_bad_input(ctx.where() + ": branch '" + branch.name + "' has " + std::to_string(outs.size()) +
                      " outputs, the node " + std::to_string(ctx.num_outputs()));
    for (int i = 0; i < ctx.num_outputs(); ++i) copy_to_output(ctx, i, outs[i]);
  }

 private:
  const Graph& then_;
  const Graph& else_;
};

class LoopKernel : public Kernel {
 public:
  explicit LoopKernel(const KernelInfo& info) : body_(graph_attr(info, "body")) {
    for (const ValueType* t : info.output_types) out_types_.push_back(t);
  }
  void compute(KernelContext& ctx) override {
    const Tensor* m = optional_input(ctx, 0);
    const Tensor* c = optional_input(ctx, 1);
    int64_t max_trip = m ? m->as_int64(0) : std::numeric_limits<int64_t>::max();
    if (m && m->numel() != 1) throw_bad_input(ctx.where() + ": M must have one element");
    bool cond = c ? scalar_true(*c, ctx.where(), "cond") : true;
    const int n_state = ctx.num_inputs() - 2;
    const int n_body_in = static_cast<int>(body_.inputs().size());
    if (n_body_in != n_state + 2)
      throw_bad_input(ctx.where() + ": body takes " + std::to_string(n_body_in) + " inputs, the node gives " +
                      std::to_string(n_state + 2));
    const int n_scan = ctx.num_outputs() - n_state;
    std::vector<Tensor> state;
    for (int j = 0; j < n_state; ++j) state.push_back(required_input(ctx, 2 + j));
    std::vector<std::vector<Tensor>> scans(std::max(n_scan, 0));
    std::vector<Tensor> body_in(n_body_in);
    for (int64_t it = 0; it < max_trip && cond; ++it) {
      body_in[0] = Tensor::scalar<int64_t>(it);
      body_in[1] = Tensor::scalar<bool>(cond);
      for (int j = 0; j < n_state; ++j) body_in[2 + j] = state[j];
      std::vector<Tensor> out = ctx.run_subgraph(body_, body_in);
      if (static_cast<int>(out.size()) != 1 + n_state + n_scan)
        throw_bad_input(ctx.where() + ": body has " + std::to_string(out.size()) + " outputs, expected " +
                        std::to_string(1 + n_state + n_scan));
      cond = scalar_true(out[0], ctx.where(), "the body's condition output");
      for (int j = 0; j < n_state; ++j) state[j] = std::move(out[1 + j]);
      for (int k = 0; k < n_scan; ++k) scans[k].push_back(std::move(out[1 + n_state + k]));
    }
    for (int j = 0; j < n_state; ++j) copy_to_output(ctx, j, state[j]);
    for (int k = 0; k < n_scan; ++k)
      stack_to_output(ctx, n_state + k, scans[k], 0, false,
                      n_state + k < static_cast<int>(out_types_.size()) ? out_types_[n_state + k] : nullptr);
  }

 private:
  const Graph& body_;
  std::vector<const ValueType*> out_types_;
};

class ScanKernel : public Kernel {
 public:
  explicit ScanKernel(const KernelInfo& info) : body_(graph_attr(info, "body")) {
    const Node& n = info.n();
    n_scan_in_ = n.attr_int("num_scan_inputs", -1);
    if (n_scan_in_ < 0) throw_bad_input(info.where() + ": missing attribute num_scan_inputs");
    in_dirs_ = n.attr_ints("scan_input_directions");
    in_axes_ = n.attr_ints("scan_input_axes");
    out_dirs_ = n.attr_ints("scan_output_directions");
    out_axes_ = n.attr_ints("scan_output_axes");
    for (const ValueType* t : info.output_types) out_types_.push_back(t);
  }
  void compute(KernelContext& ctx) override {
    const int m = static_cast<int>(n_scan_in_);
    const int n_state = ctx.num_inputs() - m;
    const int n_scan_out = ctx.num_outputs() - n_state;
    if (n_state < 0 || n_scan_out < 0) throw_bad_input(ctx.where() + ": more scan inputs than inputs");
    std::vector<Tensor> state;
    for (int j = 0; j < n_state; ++j) state.push_back(required_input(ctx, j));
    std::vector<const Tensor*> xs;
    std::vector<int64_t> axes;
    int64_t len = -1;
    for (int k = 0; k < m; ++k) {
      const Tensor& x = required_input(ctx, n_state + k);
      int64_t ax = k < static_cast<int>(in_axes_.size()) ? in_axes_[k] : 0;
      if (ax < 0) ax += x.rank();
      if (ax < 0 || ax >= x.rank()) throw_bad_input(ctx.where() + ": scan_input_axes out of range");
      if (x.dtype() == DataType::String) throw_bad_input(ctx.where() + ": string scan inputs are not supported");
      if (len >= 0 && x.shape()[ax] != len)
        throw_bad_input(ctx.where() + ": scan inputs have different sequence lengths");
      len = x.shape()[ax];
      xs.push_back(&x);
      axes.push_back(ax);
    }
    if (len < 0) len = 0;
    std::vector<std::vector<Tensor>> scans(n_scan_out);
    std::vector<Tensor> body_in(n_state + m);
    for (int64_t t = 0; t < len; ++t) {
      for (int j = 0; j < n_state; ++j) body_in[j] = state[j];
      for (int k = 0; k < m; ++k) {
        bool rev = k < static_cast<int>(in_dirs_.size()) && in_dirs_[k] == 1;
        body_in[n_state + k] = take_slice(*xs[k], axes[k], rev ? len - 1 - t : t);
      }
      std::vector<Tensor> out = ctx.run_subgraph(body_, body_in);
      if (static_cast<int>(out.size()) != n_state + n_scan_out)
        throw_bad_input(ctx.where() + ": body has " + std::to_string(out.size()) + " outputs, expected " +
                        std::to_string(n_state + n_scan_out));
      for (int j = 0; j < n_state; ++j) state[j] = std::move(out[j]);
      for (int k = 0; k < n_scan_out; ++k) scans[k].push_back(std::move(out[n_state + k]));
    }
    for (int j = 0; j < n_state; ++j) copy_to_output(ctx, j, state[j]);
    for (int k = 0; k < n_scan_out; ++k) {
      int64_t ax = k < static_cast<int>(out_axes_.size()) ? out_axes_[k] : 0;
      bool rev = k < static_cast<int>(out_dirs_.size()) && out_dirs_[k] == 1;
      stack_to_output(ctx, n_state + k, scans[k], ax, rev,
                      n_state + k < static_cast<int>(out_types_.size()) ? out_types_[n_state + k] : nullptr);
    }
  }

 private:
  const Graph& body_;
  int64_t n_scan_in_ = 0;
  std::vector<int64_t> in_dirs_, in_axes_, out_dirs_, out_axes_;
  std::vector<const ValueType*> out_types_;
};

// Scan-8: a leading batch axis on every state and scan input, optional sequence_lens (input 0);
// scan inputs are [batch, sequence, ...], scan outputs [batch, sequence, ...] (zero past a
// batch entry's length).
class Scan8Kernel : public Kernel {
 public:
  explicit Scan8Kernel(const KernelInfo& info) : body_(graph_attr(info, "body")) {
    n_scan_in_ = info.n().attr_int("num_scan_inputs", -1);
    if (n_scan_in_ < 0) throw_bad_input(info.where() + ": missing attribute num_scan_inputs");
    dirs_ = info.n().attr_ints("directions");
  }
  void compute(KernelContext& ctx) override {
    const int m = static_cast<int>(n_scan_in_);
    const int n_state = ctx.num_inputs() - 1 - m;
    const int n_scan_out = ctx.num_outputs() - n_state;
    if (n_state < 0 || n_scan_out < 0 || m < 1) throw_bad_input(ctx.where() + ": inputs do not match num_scan_inputs");
    const Tensor& x0 = required_input(ctx, 1 + n_state);
    if (x0.rank() < 2) throw_bad_input(ctx.where() + ": scan inputs need [batch, sequence, ...]");
    const int64_t batch = x0.dim(0), max_len = x0.dim(1);
    const Tensor* lens = optional_input(ctx, 0);
    std::vector<std::vector<Tensor>> states_out(n_state), scans_out(n_scan_out);
    std::vector<Tensor> body_in(n_state + m);
    for (int64_t b = 0; b < batch; ++b) {
      int64_t len = lens ? lens->as_int64(b) : max_len;
      if (len < 0 || len > max_len) throw_bad_input(ctx.where() + ": sequence_lens out of range");
      std::vector<Tensor> state, xs;
      for (int j = 0; j < n_state; ++j) state.push_back(take_slice(required_input(ctx, 1 + j), 0, b));
      for (int k = 0; k < m; ++k) xs.push_back(take_slice(required_input(ctx, 1 + n_state + k), 0, b));
      std::vector<std::vector<Tensor>> steps(n_scan_out);
      for (int64_t t = 0; t < len; ++t) {
        for (int j = 0; j < n_state; ++j) body_in[j] = state[j];
        for (int k = 0; k < m; ++k) {
          bool rev = k < static_cast<int>(dirs_.size()) && dirs_[k] == 1;
          body_in[n_state + k] = take_slice(xs[k], 0, rev ? len - 1 - t : t);
        }
        std::vector<Tensor> out = ctx.run_subgraph(body_, body_in);
        if (static_cast<int>(out.size()) != n_state + n_scan_out)
          throw_bad_input(ctx.where() + ": body output count does not match the node");
        for (int j = 0; j < n_state; ++j) state[j] = std::move(out[j]);
        for (int k = 0; k < n_scan_out; ++k) steps[k].push_back(out[n_state + k].clone());
      }
      for (int k = 0; k < n_scan_out; ++k) {
        if (steps[k].empty()) throw_bad_input(ctx.where() + ": empty sequences are not supported");
        while (static_cast<int64_t>(steps[k].size()) < max_len)
          steps[k].push_back(Tensor(steps[k][0].dtype(), steps[k][0].shape()));  // zero padding
        scans_out[k].push_back(stack_front(steps[k], ctx.where()));
      }
      for (int j = 0; j < n_state; ++j) states_out[j].push_back(state[j]);
    }
    for (int j = 0; j < n_state; ++j) stack_to_output(ctx, j, states_out[j], 0, false, nullptr);
    for (int k = 0; k < n_scan_out; ++k) stack_to_output(ctx, n_state + k, scans_out[k], 0, false, nullptr);
  }

 private:
  const Graph& body_;
  int64_t n_scan_in_ = 0;
  std::vector<int64_t> dirs_;
};

}  // namespace

void register_control_flow_kernels(KernelRegistry& r) {
  add_reference_kernel<IfKernel>(r, "If", 1);
  add_reference_kernel<LoopKernel>(r, "Loop", 1);
  add_reference_kernel<Scan8Kernel>(r, "Scan", 8);
  add_reference_kernel<ScanKernel>(r, "Scan", 9);
}

}  // namespace fusor
