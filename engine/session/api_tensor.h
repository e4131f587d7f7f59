// Conversions between the public HostTensor / TensorInfo (include/fusor/tensor.h) and the
// engine's Tensor / Value, without copying tensor data.
#pragma once
#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "fusor/tensor.h"

namespace fusor {

inline DataType to_dtype(ElementType t) { return static_cast<DataType>(static_cast<int32_t>(t)); }
inline ElementType to_element_type(DataType t) {
  switch (t) {
    case DataType::Complex64:
    case DataType::Complex128: return ElementType::Undefined;
    default: return static_cast<ElementType>(static_cast<int32_t>(t));
  }
}

// A view of the HostTensor's memory (the HostTensor must outlive its use).
Tensor engine_view(const HostTensor& t);
// Takes over the engine tensor's buffer: the HostTensor keeps it alive. String and complex
// tensors throw Exception(Fail) (the API does not carry them).
HostTensor host_tensor(Tensor&& t);
// Metadata of a graph value as the public API shows it.
TensorInfo tensor_info(const Value& v);

}  // namespace fusor
