// Tensors passed to and returned by fusor::Session::run, and the metadata of model inputs and
// outputs.
//
// A HostTensor is a dense, row-major tensor in host memory. It either
// - borrows memory the caller owns (HostTensor::borrow): no copy; the caller keeps the memory
//   alive and unchanged until run() returns;
// - shares memory kept alive by an owner object (HostTensor::share): no copy; the owner is held
//   for as long as any copy of the HostTensor lives (how run() returns outputs, and how a
//   binding such as Python's can hand over an array it keeps referenced);
// - or owns fresh, zeroed memory (HostTensor::allocate).
// Copies of a HostTensor share the same memory (like std::shared_ptr). String tensors are not
// supported by this API.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fusor {

// Numbered as ONNX's TensorProto.DataType.
enum class ElementType : int32_t {
  Undefined = 0, Float = 1, UInt8 = 2, Int8 = 3, UInt16 = 4, Int16 = 5, Int32 = 6, Int64 = 7,
  String = 8, Bool = 9, Float16 = 10, Double = 11, UInt32 = 12, UInt64 = 13, BFloat16 = 16,
};

// Bytes per element (0 for Undefined and String).
size_t element_size(ElementType t);
// ONNX's spelling: "float", "int64", ...
const char* element_type_name(ElementType t);

template <typename T> struct element_type_of;
template <> struct element_type_of<float> { static constexpr ElementType value = ElementType::Float; };
template <> struct element_type_of<double> { static constexpr ElementType value = ElementType::Double; };
template <> struct element_type_of<int64_t> { static constexpr ElementType value = ElementType::Int64; };
template <> struct element_type_of<int32_t> { static constexpr ElementType value = ElementType::Int32; };
template <> struct element_type_of<int16_t> { static constexpr ElementType value = ElementType::Int16; };
template <> struct element_type_of<int8_t> { static constexpr ElementType value = ElementType::Int8; };
template <> struct element_type_of<uint8_t> { static constexpr ElementType value = ElementType::UInt8; };
template <> struct element_type_of<uint16_t> { static constexpr ElementType value = ElementType::UInt16; };
template <> struct element_type_of<uint32_t> { static constexpr ElementType value = ElementType::UInt32; };
template <> struct element_type_of<uint64_t> { static constexpr ElementType value = ElementType::UInt64; };
template <> struct element_type_of<bool> { static constexpr ElementType value = ElementType::Bool; };

class HostTensor {
 public:
  HostTensor() = default;

  // No copy: `data` must hold at least element_count * element_size bytes and stay valid (and
  // unchanged) while the tensor is in use. Throws Exception(InvalidArgument) when `bytes` is too
  // small, a dim is negative or the type is String/Undefined.
  static HostTensor borrow(ElementType type, std::vector<int64_t> shape, void* data, size_t bytes);
  // No copy: `owner` keeps `data` alive.
  static HostTensor share(ElementType type, std::vector<int64_t> shape, void* data, size_t bytes,
                          std::shared_ptr<const void> owner);
  // Fresh, zeroed, 64-byte aligned memory.
  static HostTensor allocate(ElementType type, std::vector<int64_t> shape);
  // A fresh tensor holding a copy of `values` (values.size() must match the shape).
  template <typename T>
  static HostTensor copy_of(std::vector<int64_t> shape, const std::vector<T>& values) {
    HostTensor t = allocate(element_type_of<T>::value, std::move(shape));
    t.check_count(values.size());
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
    return t;
  }

  bool empty() const { return data_ == nullptr && type_ == ElementType::Undefined; }
  ElementType element_type() const { return type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t element_count() const;
  size_t byte_size() const { return static_cast<size_t>(element_count()) * element_size(type_); }
  // Whether the tensor keeps its memory alive itself (allocate / share), as opposed to borrow.
  bool owns_memory() const { return owner_ != nullptr; }

  void* data() { return data_; }
  const void* data() const { return data_; }
  // Throws Exception(InvalidArgument) when T does not match element_type().
  template <typename T> T* data() { check_type(element_type_of<T>::value); return static_cast<T*>(data_); }
  template <typename T> const T* data() const { check_type(element_type_of<T>::value); return static_cast<const T*>(data_); }

 private:
  void check_type(ElementType want) const;
  void check_count(size_t n) const;
  ElementType type_ = ElementType::Undefined;
  std::vector<int64_t> shape_;
  void* data_ = nullptr;
  std::shared_ptr<const void> owner_;
};

using NamedTensor = std::pair<std::string, HostTensor>;

// A model input or output as the model declares it (after dim/shape overrides and shape
// inference).
struct TensorInfo {
  std::string name;
  std::string type;                  // ONNX's spelling: "tensor(float)"; non-tensors: "seq(tensor(float))", ...
  ElementType element_type = ElementType::Undefined;  // Undefined for non-tensor types
  bool has_shape = false;            // false: the rank is unknown too
  std::vector<int64_t> shape;        // -1 where the dim is not a known number
  std::vector<std::string> dim_names;  // per dim: the symbolic name ("batch"), "" when known or unnamed
};

}  // namespace fusor
