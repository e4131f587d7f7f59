#include "kernels/fused/common.h"

#include <cstring>

#include "kernels/register.h"

namespace fusor::fused {

std::unique_ptr<Kernel> make_reference(const KernelInfo& info) {
  const KernelRegistry::Entry* e = KernelRegistry::global().find(info.n().op, info.opset, "reference");
  if (!e) throw_bad_input(info.where() + ": no reference kernel to fall back to");
  return e->factory(info);
}

bool known_not_float(const KernelInfo& info, size_t i) {
  return i < info.input_types.size() && info.input_types[i] && info.input_types[i]->elem != DataType::Undefined &&
         info.input_types[i]->elem != DataType::Float;
}

const Tensor* const_float(const KernelInfo& info, size_t i) {
  if (i >= info.const_inputs.size() || !info.const_inputs[i]) return nullptr;
  const Tensor* t = info.const_inputs[i].get();
  return t->dtype() == DataType::Float ? t : nullptr;
}

GemmRun gemm_run(KernelContext& ctx) {
  GemmRun run;
  run.pool = &ctx.threads();
  run.scratch = [&ctx](size_t bytes) { return ctx.scratch(bytes); };
  return run;
}

void write_output(KernelContext& ctx, int i, const Tensor& t) {
  Tensor& y = ctx.output(i, t.shape(), t.dtype());
  if (t.nbytes()) std::memcpy(y.raw(), t.raw(), t.nbytes());
}

}  // namespace fusor::fused

namespace fusor {

void register_fused_kernels(KernelRegistry& r) {
  fused::register_fused_conv_kernels(r);
  fused::register_fused_gemm_kernels(r);
  fused::register_fused_elementwise_kernels(r);
  fused::register_fused_norm_kernels(r);
  fused::register_fused_attention_kernels(r);
  fused::register_fused_pool_kernels(r);
}

}  // namespace fusor
