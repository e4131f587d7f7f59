// Small helpers every reference kernel uses: registration, required inputs, int-list inputs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace fusor {

// Registers K (constructible from const KernelInfo&) as the "reference" implementation, priority 0.
template <class K>
void add_reference_kernel(KernelRegistry& r, const char* op, int since_version = 1) {
  r.add("", op, "reference", 0, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    return std::make_unique<K>(info);
  }, since_version);
}

// Input i, throwing BadInput "<where>: missing input i" when it is absent.
inline const Tensor& required_input(KernelContext& ctx, int i) {
  const Tensor* t = i < ctx.num_inputs() ? ctx.input(i) : nullptr;
  if (!t || !t->defined()) throw_bad_input(ctx.where() + ": missing required input " + std::to_string(i));
  return *t;
}

// Optional input i (nullptr when absent or beyond the node's inputs).
inline const Tensor* optional_input(KernelContext& ctx, int i) {
  const Tensor* t = i < ctx.num_inputs() ? ctx.input(i) : nullptr;
  return t && t->defined() ? t : nullptr;
}

// An integer tensor (int32/int64) read as int64 values; BadInput for other element types.
inline std::vector<int64_t> int_list_input(const Tensor& t, const std::string& where, const char* what) {
  if (t.dtype() != DataType::Int64 && t.dtype() != DataType::Int32)
    throw_bad_input(where + ": " + what + " must be int64 or int32, got " + dtype_name(t.dtype()));
  return t.to_int64_vector();
}

// Whether the node has input i (present in the graph).
inline bool node_has_input(const KernelInfo& info, size_t i) { return info.node && info.node->has_input(i); }

}  // namespace fusor
