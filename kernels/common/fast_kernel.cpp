#include "kernels/common/fast_kernel.h"

#include "core/util/error.h"

namespace fusor {

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

PackedB pack_constant_b(const KernelInfo& info, bool trans_b) {
  const Tensor* b = const_float(info, 1);
  if (!b || b->rank() != 2) return {};
  const int64_t K = trans_b ? b->dim(1) : b->dim(0), N = trans_b ? b->dim(0) : b->dim(1);
  return PackedB(MatrixRef{b->data<float>(), b->dim(1), trans_b}, K, N, std::nullopt, info.prepack,
                 trans_b ? "bt" : "b");
}

GemmRun gemm_run(KernelContext& ctx) {
  GemmRun run;
  run.pool = &ctx.threads();
  run.scratch = [&ctx](size_t bytes) { return ctx.scratch(bytes); };
  return run;
}

}  // namespace fusor
