// Tensor: an element type, a shape and a view into shared storage.
//
// Storage is reference counted and never copied implicitly. Initializers are moved out of the
// parsed protobuf (the raw_data string is swapped into a StringBuffer), external data may be a
// memory-mapped file, and executor intermediates are views into the session's arena.
//
// A Tensor is also the executor's run-time value of the two non-tensor ONNX types fusor runs
// (core/ir/graph.h TypeKind): a *sequence*, an immutable shared list of tensors that each own
// their storage (never arena views), and *none*, an empty optional. A present optional is just
// its content. Both have dtype() Undefined, no shape and no storage, but are defined(); code that
// handles them asks is_sequence() / is_none(), and everything else sees is_plain() false.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/dtype.h"

namespace fusor {

using Shape = std::vector<int64_t>;

// The element count. A product that overflows int64 (a hostile shape such as 2^32 x 2^32) is
// BadInput, never a wrapped count that would pass a size check.
int64_t shape_numel(const Shape& s);
// The element count, or nullopt when a dim is negative or the product overflows int64.
std::optional<int64_t> checked_numel(const Shape& s);
// The element count times `elem_bytes`, or nullopt when a dim is negative or it overflows.
std::optional<size_t> checked_nbytes(const Shape& s, size_t elem_bytes);
std::string shape_str(const Shape& s);  // "1x3x224x224", "scalar" for rank 0

// Backing memory of one or more tensors.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* data() = 0;
  virtual size_t size() const = 0;
};

// 64-byte aligned heap memory.
std::shared_ptr<Buffer> make_aligned_buffer(size_t bytes, bool zero = true);
// Takes ownership of a string's bytes without copying them (protobuf raw_data).
std::shared_ptr<Buffer> make_string_buffer(std::string&& bytes);
// Does not own the memory; the caller keeps it alive.
std::shared_ptr<Buffer> make_external_buffer(void* data, size_t bytes);

class Tensor {
 public:
  Tensor() = default;
  // Allocates zeroed, aligned storage.
  Tensor(DataType dtype, Shape shape);
  // Wraps existing storage; nbytes must fit.
  Tensor(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t offset = 0);
  // A non-owning view of memory the caller keeps alive.
  static Tensor view(DataType dtype, Shape shape, void* data);
  // String tensors hold their elements in a vector.
  static Tensor strings(Shape shape, std::vector<std::string> values);
  template <typename T>
  static Tensor scalar(T v) {
    Tensor t(dtype_of<T>::value, {});
    *t.data<T>() = v;
    return t;
  }
  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& v) {
    Tensor t(dtype_of<T>::value, std::move(shape));
    for (size_t i = 0; i < v.size() && i < static_cast<size_t>(t.numel()); ++i) t.data<T>()[i] = v[i];
    return t;
  }

  // A sequence of `items` whose elements are `elem` (Undefined when not known, e.g. an empty
  // sequence of undeclared type). The items must own their storage (clone arena views first).
  static Tensor sequence(DataType elem, std::vector<Tensor> items);
  // An empty optional.
  static Tensor none();

  bool defined() const { return dtype_ != DataType::Undefined || kind_ != Kind::Plain; }
  bool is_plain() const { return kind_ == Kind::Plain; }
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  bool is_none() const { return kind_ == Kind::None; }
  // A sequence's items (empty for anything else) and element type.
  const std::vector<Tensor>& items() const;
  DataType sequence_elem() const { return seq_elem_; }
  // "tensor float[2x3]", "sequence of 3 float tensors", "none" (for messages).
  std::string describe() const;
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

  void* raw() { return buffer_ ? static_cast<char*>(buffer_->data()) + offset_ : nullptr; }
  const void* raw() const { return buffer_ ? static_cast<const char*>(buffer_->data()) + offset_ : nullptr; }
  template <typename T> T* data() { return static_cast<T*>(raw()); }
  template <typename T> const T* data() const { return static_cast<const T*>(raw()); }
  std::vector<std::string>& string_data() { return *strings_; }
  const std::vector<std::string>& string_data() const { return *strings_; }

  // Same storage, new shape (numel must match).
  Tensor reshaped(Shape shape) const;
  // A deep copy into fresh storage.
  Tensor clone() const;
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  size_t offset() const { return offset_; }

  // Element i converted to double / int64 (for small shape-like tensors and tests).
  double as_double(int64_t i) const;
  int64_t as_int64(int64_t i) const;
  std::vector<int64_t> to_int64_vector() const;
  // Bitwise equality of dtype, shape and bytes (of every item, for sequences).
  bool bit_equal(const Tensor& other) const;

 private:
  enum class Kind : uint8_t { Plain, Sequence, None };
  Kind kind_ = Kind::Plain;
  DataType seq_elem_ = DataType::Undefined;
  std::shared_ptr<const std::vector<Tensor>> items_;
  DataType dtype_ = DataType::Undefined;
  Shape shape_;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
  std::shared_ptr<std::vector<std::string>> strings_;
};

using TensorPtr = std::shared_ptr<const Tensor>;

}  // namespace fusor
