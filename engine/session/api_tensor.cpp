#include "engine/session/api_tensor.h"

#include <cstring>

#include "engine/session/api_error.h"
#include "engine/session/model_stats.h"

namespace fusor {

size_t element_size(ElementType t) {
  if (t == ElementType::Undefined || t == ElementType::String) return 0;
  return dtype_size(to_dtype(t));
}

const char* element_type_name(ElementType t) { return dtype_name(to_dtype(t)); }

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

void check_new(ElementType type, const std::vector<int64_t>& shape) {
  if (element_size(type) == 0)
    throw_api(ErrorCode::InvalidArgument, std::string("HostTensor: element type ") + element_type_name(type) +
                                              " is not supported by the API");
  for (int64_t d : shape)
    if (d < 0) throw_api(ErrorCode::InvalidArgument, "HostTensor: negative dimension in shape " + shape_text(shape));
}

}  // namespace

int64_t HostTensor::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

HostTensor HostTensor::borrow(ElementType type, std::vector<int64_t> shape, void* data, size_t bytes) {
  return share(type, std::move(shape), data, bytes, nullptr);
}

HostTensor HostTensor::share(ElementType type, std::vector<int64_t> shape, void* data, size_t bytes,
                             std::shared_ptr<const void> owner) {
  check_new(type, shape);
  HostTensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  if (t.byte_size() > bytes)
    throw_api(ErrorCode::InvalidArgument, "HostTensor: " + std::to_string(bytes) + " bytes given for a " +
                                              element_type_name(type) + shape_text(t.shape_) + " tensor of " +
                                              std::to_string(t.byte_size()) + " bytes");
  if (!data && t.byte_size() > 0) throw_api(ErrorCode::InvalidArgument, "HostTensor: null data");
  t.data_ = data;
  t.owner_ = std::move(owner);
  return t;
}

HostTensor HostTensor::allocate(ElementType type, std::vector<int64_t> shape) {
  check_new(type, shape);
  HostTensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  auto buffer = make_aligned_buffer(t.byte_size(), true);
  t.data_ = buffer->data();
  t.owner_ = std::move(buffer);
  return t;
}

void HostTensor::check_type(ElementType want) const {
  if (want != type_)
    throw_api(ErrorCode::InvalidArgument, std::string("HostTensor holds ") + element_type_name(type_) + ", not " +
                                              element_type_name(want));
}

void HostTensor::check_count(size_t n) const {
  if (static_cast<int64_t>(n) != element_count())
    throw_api(ErrorCode::InvalidArgument, "HostTensor: " + std::to_string(n) + " values for shape " +
                                              shape_text(shape_) + " (" + std::to_string(element_count()) + " elements)");
}

Tensor engine_view(const HostTensor& t) {
  Shape shape(t.shape().begin(), t.shape().end());
  return Tensor::view(to_dtype(t.element_type()), std::move(shape), const_cast<void*>(t.data()));
}

HostTensor host_tensor(Tensor&& t) {
  if (!t.is_plain())
    throw_api(ErrorCode::Fail, "an output that is a " + t.describe() +
                                   " cannot be returned through the API (it returns tensors; `fusor run` writes sequences)");
  ElementType type = to_element_type(t.dtype());
  if (element_size(type) == 0)
    throw_api(ErrorCode::Fail, std::string("an output of type ") + dtype_name(t.dtype()) +
                                   " cannot be returned through the API");
  std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
  auto owner = std::make_shared<Tensor>(std::move(t));
  void* data = owner->raw();
  size_t bytes = owner->nbytes();
  if (!data && bytes == 0) {  // an empty tensor may have no buffer at all
    static char empty_byte;
    data = &empty_byte;
  }
  return HostTensor::share(type, std::move(shape), data, bytes, std::move(owner));
}

TensorInfo tensor_info(const Value& v) {
  TensorInfo info;
  info.name = v.name;
  info.type = onnx_type_name(v.type);
  info.element_type = v.type.is_tensor() ? to_element_type(v.type.elem) : ElementType::Undefined;
  info.has_shape = v.type.has_shape;
  for (const Dim& d : v.type.dims) {
    info.shape.push_back(d.is_known() ? d.value : -1);
    info.dim_names.push_back(d.is_known() ? "" : d.param);
  }
  return info;
}

}  // namespace fusor
