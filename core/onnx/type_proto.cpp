#include "core/onnx/type_proto.h"

namespace fusor {

// Tensor denotations (TypeProto.denotation, Dimension.denotation) are not modeled and are dropped.
ValueType value_type_from_proto(const onnx::TypeProto& tp) {
  ValueType vt;
  if (tp.value_case() == onnx::TypeProto::VALUE_NOT_SET) return vt;
  if (tp.value_case() == onnx::TypeProto::kSequenceType || tp.value_case() == onnx::TypeProto::kOptionalType) {
    const onnx::TypeProto& inner = tp.value_case() == onnx::TypeProto::kSequenceType ? tp.sequence_type().elem_type()
                                                                                   : tp.optional_type().elem_type();
    ValueType el = value_type_from_proto(inner);
    // sequence(T) and optional(T) of a tensor, or an optional of a sequence of tensors, are
    // modelled; anything nested deeper (maps, sequences of sequences) stays opaque whole.
    bool modelled = el.is_tensor() || (tp.value_case() == onnx::TypeProto::kOptionalType && el.is_sequence() &&
                                       el.element && el.element->is_tensor());
    bool inner_set = inner.value_case() != onnx::TypeProto::VALUE_NOT_SET;
    if (modelled || !inner_set) {
      ValueType c = tp.value_case() == onnx::TypeProto::kSequenceType ? ValueType::sequence(std::move(el))
                                                                      : ValueType::optional(std::move(el));
      if (!inner_set) c.element.reset();
      return c;
    }
  }
  if (tp.value_case() != onnx::TypeProto::kTensorType) {
    vt.kind = TypeKind::Opaque;
    vt.opaque = tp.SerializeAsString();
    return vt;
  }
  const auto& tt = tp.tensor_type();
  vt.elem = static_cast<DataType>(tt.elem_type() >= 0 && tt.elem_type() <= 16 ? tt.elem_type() : 0);
  if (tt.has_shape()) {
    vt.has_shape = true;
    vt.dims.reserve(static_cast<size_t>(tt.shape().dim_size()));
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) vt.dims.push_back(Dim::known(d.dim_value()));
      else if (d.has_dim_param()) vt.dims.push_back(Dim::symbol(d.dim_param()));
      else vt.dims.push_back(Dim{});
    }
  }
  return vt;
}

bool value_type_to_proto(const ValueType& vt, onnx::TypeProto* tp) {
  switch (vt.kind) {
    case TypeKind::Opaque: return tp->ParseFromString(vt.opaque);
    case TypeKind::Sequence:
      if (vt.element) value_type_to_proto(*vt.element, tp->mutable_sequence_type()->mutable_elem_type());
      else tp->mutable_sequence_type();
      return true;
    case TypeKind::Optional:
      if (vt.element) value_type_to_proto(*vt.element, tp->mutable_optional_type()->mutable_elem_type());
      else tp->mutable_optional_type();
      return true;
    case TypeKind::Tensor: break;
  }
  if (vt.elem == DataType::Undefined && !vt.has_shape) return false;
  auto* tt = tp->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(vt.elem));
  if (vt.has_shape) {
    auto* sh = tt->mutable_shape();
    for (const Dim& dim : vt.dims) {
      auto* d = sh->add_dim();
      if (dim.is_known()) d->set_dim_value(dim.value);
      else if (!dim.param.empty()) d->set_dim_param(dim.param);
    }
  }
  return true;
}

bool type_proto_is_informative(const onnx::TypeProto& tp) {
  switch (tp.value_case()) {
    case onnx::TypeProto::VALUE_NOT_SET: return false;
    case onnx::TypeProto::kTensorType: return tp.tensor_type().elem_type() != 0;
    default: return true;
  }
}

}  // namespace fusor
