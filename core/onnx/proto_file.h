// Reading protobuf messages from files and bytes (beyond protobuf's default 64 MB limit), and
// writing byte streams to files atomically.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <google/protobuf/message_lite.h>

namespace fusor {

// Parses the file straight from its descriptor (no in-memory copy of the file). Throws BadInput
// "PATH: ..." when the file is missing or unreadable, or "PATH: not a valid <what> ..." when
// parsing fails.
void parse_proto_file(const std::string& path, google::protobuf::MessageLite* msg, const char* what);
// False when the bytes do not parse.
bool parse_proto_bytes(std::string_view bytes, google::protobuf::MessageLite* msg);
// Whole file contents; BadInput naming the file when it cannot be read.
std::string read_file_bytes(const std::string& path);

// Where serialized bytes go: a file (written to PATH.tmp and renamed into place on commit, so a
// failed save never leaves half a model and never truncates a file that is still mapped) or a string.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const void* data, size_t n) = 0;
  void write(const std::string& s) { write(s.data(), s.size()); }
  void write_varint(uint64_t v);
  // A length-delimited field's tag and length.
  void write_len_field_header(uint32_t field, uint64_t len);
};

class FileSink : public ByteSink {
 public:
  explicit FileSink(std::string path);
  ~FileSink() override;  // removes the temporary file if commit() was not reached
  void write(const void* data, size_t n) override;
  using ByteSink::write;
  void commit();

 private:
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
};

class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  void write(const void* data, size_t n) override { out_->append(static_cast<const char*>(data), n); }
  using ByteSink::write;

 private:
  std::string* out_;
};

// Bytes a varint takes.
size_t varint_size(uint64_t v);

}  // namespace fusor
