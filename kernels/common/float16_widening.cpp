#include "kernels/common/float16_widening.h"

#include "kernels/common/half.h"

namespace fusor {

namespace {

bool is_half(DataType t) { return t == DataType::Float16 || t == DataType::BFloat16; }

class WideningContext : public KernelContext {
 public:
  WideningContext(KernelContext& outer) : outer_(outer) {
    for (int i = 0; i < outer.num_inputs(); ++i) {
      const Tensor* t = outer.input(i);
      if (t && is_half(t->dtype())) {
        half_type_ = t->dtype();
        Tensor w(DataType::Float, t->shape());
        const uint16_t* p = t->data<uint16_t>();
        float* q = w.data<float>();
        const int64_t n = t->numel();
        for (int64_t k = 0; k < n; ++k)
          q[k] = t->dtype() == DataType::Float16 ? half_to_float(p[k]) : bfloat16_to_float(p[k]);
        wide_.push_back(std::move(w));
      } else {
        wide_.emplace_back();
      }
    }
    outputs_.resize(outer.num_outputs());
  }
  int num_inputs() const override { return outer_.num_inputs(); }
  const Tensor* input(int i) const override { return wide_[i].defined() ? &wide_[i] : outer_.input(i); }
  int num_outputs() const override { return outer_.num_outputs(); }
  bool output_wanted(int i) const override { return outer_.output_wanted(i); }
  Tensor& output(int i, const Shape& shape, DataType dtype) override {
    if (dtype != DataType::Float) return outer_.output(i, shape, dtype);
    outputs_[i] = Tensor(DataType::Float, shape);
    return outputs_[i];
  }
  Tensor& output_alias(int i, int in, const Shape& shape) override { return outer_.output_alias(i, in, shape); }
  void* scratch(size_t bytes) override { return outer_.scratch(bytes); }
  ThreadPool& threads() override { return outer_.threads(); }
  std::vector<Tensor> run_subgraph(const Graph& body, const std::vector<Tensor>& inputs) override {
    return outer_.run_subgraph(body, inputs);
  }
  std::string where() const override { return outer_.where(); }

  // Narrows the float outputs into the outer context's half outputs.
  void finish() {
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const Tensor& w = outputs_[i];
      if (!w.defined()) continue;
      Tensor& out = outer_.output(static_cast<int>(i), w.shape(), half_type_);
      const float* p = w.data<float>();
      uint16_t* q = out.data<uint16_t>();
      const int64_t n = w.numel();
      for (int64_t k = 0; k < n; ++k)
        q[k] = half_type_ == DataType::Float16 ? float_to_half(p[k]) : float_to_bfloat16(p[k]);
    }
  }

 private:
  KernelContext& outer_;
  std::vector<Tensor> wide_, outputs_;
  DataType half_type_ = DataType::Float16;
};

}  // namespace

bool has_half_input(const KernelContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t && is_half(t->dtype())) return true;
  }
  return false;
}

void compute_widened(KernelContext& ctx, const std::function<void(KernelContext&)>& body) {
  WideningContext w(ctx);
  body(w);
  w.finish();
}

}  // namespace fusor
