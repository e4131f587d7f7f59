#include "core/ir/tensor.h"

#include <cstdlib>
#include <cstring>

#include "core/util/error.h"
#include "core/util/memory_limit.h"

namespace fusor {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n))
      throw_bad_input("shape " + shape_str(s) + " has more elements than a 64-bit count can hold");
  return n;
}

std::optional<int64_t> checked_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

std::optional<size_t> checked_nbytes(const Shape& s, size_t elem_bytes) {
  std::optional<int64_t> n = checked_numel(s);
  size_t bytes = 0;
  if (!n || __builtin_mul_overflow(static_cast<size_t>(*n), elem_bytes, &bytes)) return std::nullopt;
  return bytes;
}

std::string shape_str(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(s[i]);
  }
  return out;
}

namespace {

class AlignedBuffer : public Buffer {
 public:
  AlignedBuffer(size_t bytes, bool zero) : size_(bytes) {
    check_memory(bytes, "allocating a tensor");
    size_t rounded = (bytes + 63) / 64 * 64;
    data_ = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!data_) throw_bad_input("out of memory allocating " + bytes_with_unit(bytes));
    if (zero) std::memset(data_, 0, rounded ? rounded : 64);
  }
  ~AlignedBuffer() override { std::free(data_); }
  void* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  void* data_;
  size_t size_;
};

class StringBuffer : public Buffer {
 public:
  explicit StringBuffer(std::string&& s) : s_(std::move(s)) {}
  void* data() override { return s_.data(); }
  size_t size() const override { return s_.size(); }

 private:
  std::string s_;
};

class ExternalBuffer : public Buffer {
 public:
  ExternalBuffer(void* d, size_t n) : d_(d), n_(n) {}
  void* data() override { return d_; }
  size_t size() const override { return n_; }

 private:
  void* d_;
  size_t n_;
};

}  // namespace

std::shared_ptr<Buffer> make_aligned_buffer(size_t bytes, bool zero) {
  return std::make_shared<AlignedBuffer>(bytes, zero);
}
std::shared_ptr<Buffer> make_string_buffer(std::string&& bytes) {
  return std::make_shared<StringBuffer>(std::move(bytes));
}
std::shared_ptr<Buffer> make_external_buffer(void* data, size_t bytes) {
  return std::make_shared<ExternalBuffer>(data, bytes);
}

Tensor::Tensor(DataType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_)
    if (d < 0) throw Error(ErrorKind::BadInput, "negative dimension in tensor shape " + shape_str(shape_));
  const bool strings = dtype_ == DataType::String;
  std::optional<size_t> bytes = checked_nbytes(shape_, strings ? sizeof(std::string) : dtype_size(dtype_));
  if (!bytes)
    throw_bad_input("a " + std::string(dtype_name(dtype_)) + " tensor of shape " + shape_str(shape_) +
                    " has more bytes than a 64-bit count can hold");
  if (strings) {
    check_memory(*bytes, "a string tensor of shape " + shape_str(shape_));
    strings_ = std::make_shared<std::vector<std::string>>(static_cast<size_t>(numel()));
  } else {
    buffer_ = make_aligned_buffer(*bytes);
  }
}

Tensor::Tensor(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t offset)
    : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), offset_(offset) {
  std::optional<size_t> bytes = checked_nbytes(shape_, dtype_size(dtype_));
  if (buffer_ && (!bytes || offset_ > buffer_->size() || *bytes > buffer_->size() - offset_))
    throw Error(ErrorKind::BadInput, "tensor of shape " + shape_str(shape_) + " (" + dtype_name(dtype_) +
                                         ") needs " + (bytes ? std::to_string(*bytes) : std::string("more than 2^64")) + " bytes but its data has " +
                                         std::to_string(buffer_->size() - std::min(offset_, buffer_->size())));
}

Tensor Tensor::view(DataType dtype, Shape shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.buffer_ = make_external_buffer(data, t.nbytes());
  return t;
}

Tensor Tensor::strings(Shape shape, std::vector<std::string> values) {
  Tensor t;
  t.dtype_ = DataType::String;
  t.shape_ = std::move(shape);
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error(ErrorKind::BadInput, "string tensor of shape " + shape_str(t.shape_) + " has " +
                                         std::to_string(values.size()) + " elements");
  t.strings_ = std::make_shared<std::vector<std::string>>(std::move(values));
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel())
    throw Error(ErrorKind::Internal, "reshape " + shape_str(shape_) + " to " + shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::sequence(DataType elem, std::vector<Tensor> items) {
  Tensor t;
  t.kind_ = Kind::Sequence;
  t.seq_elem_ = elem;
  t.items_ = std::make_shared<const std::vector<Tensor>>(std::move(items));
  return t;
}

Tensor Tensor::none() {
  Tensor t;
  t.kind_ = Kind::None;
  return t;
}

const std::vector<Tensor>& Tensor::items() const {
  static const std::vector<Tensor> kEmpty;
  return items_ ? *items_ : kEmpty;
}

std::string Tensor::describe() const {
  switch (kind_) {
    case Kind::None: return "none (an empty optional)";
    case Kind::Sequence:
      return "sequence of " + std::to_string(items().size()) + " " +
             (seq_elem_ == DataType::Undefined ? std::string("") : std::string(dtype_name(seq_elem_)) + " ") + "tensors";
    case Kind::Plain: break;
  }
  return std::string("tensor ") + dtype_name(dtype_) + "[" + shape_str(shape_) + "]";
}

Tensor Tensor::clone() const {
  if (kind_ != Kind::Plain) return *this;  // immutable: sharing is a copy
  if (dtype_ == DataType::String) return strings(shape_, *strings_);
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

double Tensor::as_double(int64_t i) const {
  switch (dtype_) {
    case DataType::Float: return data<float>()[i];
    case DataType::Double: return data<double>()[i];
    case DataType::Int64: return static_cast<double>(data<int64_t>()[i]);
    case DataType::Int32: return data<int32_t>()[i];
    case DataType::Int16: return data<int16_t>()[i];
    case DataType::Int8: return data<int8_t>()[i];
    case DataType::UInt8: return data<uint8_t>()[i];
    case DataType::UInt16: return data<uint16_t>()[i];
    case DataType::UInt32: return data<uint32_t>()[i];
    case DataType::UInt64: return static_cast<double>(data<uint64_t>()[i]);
    case DataType::Bool: return data<bool>()[i] ? 1.0 : 0.0;
    default: throw Error(ErrorKind::Internal, std::string("as_double on ") + dtype_name(dtype_));
  }
}

int64_t Tensor::as_int64(int64_t i) const {
  switch (dtype_) {
    case DataType::Int64: return data<int64_t>()[i];
    case DataType::Int32: return data<int32_t>()[i];
    case DataType::UInt64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: return static_cast<int64_t>(as_double(i));
  }
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) v[i] = as_int64(i);
  return v;
}

bool Tensor::bit_equal(const Tensor& o) const {
  if (kind_ != o.kind_) return false;
  if (kind_ == Kind::Sequence) {
    if (seq_elem_ != o.seq_elem_ || items().size() != o.items().size()) return false;
    for (size_t i = 0; i < items().size(); ++i)
      if (!items()[i].bit_equal(o.items()[i])) return false;
    return true;
  }
  if (kind_ == Kind::None) return true;
  if (dtype_ != o.dtype_ || shape_ != o.shape_) return false;
  if (dtype_ == DataType::String) return *strings_ == *o.strings_;
  return nbytes() == 0 || std::memcmp(raw(), o.raw(), nbytes()) == 0;
}

}  // namespace fusor
