// onnx::TypeProto <-> fusor::ValueType.
#pragma once
#include <onnx/onnx_pb.h>

#include "core/ir/graph.h"

namespace fusor {

// Tensor types map to elem + dims (dim_param -> Dim::symbol, neither -> unknown); sequence(tensor),
// optional(tensor) and optional(sequence(tensor)) to TypeKind::Sequence/Optional with their
// element type. Any other type (maps, sparse tensors, deeper nestings) is TypeKind::Opaque and
// keeps its serialized TypeProto in `opaque`.
ValueType value_type_from_proto(const onnx::TypeProto& tp);
// False when the type carries nothing (no element type, no shape, not opaque): leave it unset.
bool value_type_to_proto(const ValueType& vt, onnx::TypeProto* tp);
// True when tp says anything (an element type or a non-tensor type).
bool type_proto_is_informative(const onnx::TypeProto& tp);

}  // namespace fusor
