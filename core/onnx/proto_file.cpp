#include "core/onnx/proto_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "core/util/error.h"
#include "core/util/regular_file.h"

namespace fusor {

namespace {

int open_regular(const std::string& path, size_t* size) {
  std::string why;
  int fd = open_regular_file(path, size, &why);
  if (fd < 0) throw_bad_input(path + ": cannot open: " + why);
  return fd;
}

}  // namespace

void parse_proto_file(const std::string& path, google::protobuf::MessageLite* msg, const char* what) {
  size_t size = 0;
  int fd = open_regular(path, &size);
  if (size == 0) {
    ::close(fd);
    throw_bad_input(path + ": empty file (0 bytes), not an " + what);
  }
  if (size > static_cast<size_t>(INT_MAX)) {
    ::close(fd);
    throw_bad_input(path + ": " + std::to_string(size) + " bytes is over protobuf's 2 GB limit for one " + what +
                    " (large weights belong in external data)");
  }
  bool ok;
  {
    google::protobuf::io::FileInputStream fis(fd, 1 << 20);
    google::protobuf::io::CodedInputStream cis(&fis);
    cis.SetTotalBytesLimit(static_cast<int>(size));
    ok = msg->ParseFromCodedStream(&cis) && cis.ConsumedEntireMessage();
    ok = ok && fis.GetErrno() == 0;
  }
  ::close(fd);
  if (!ok) throw_bad_input(path + ": not a valid " + what + " (truncated or corrupt protobuf)");
}

bool parse_proto_bytes(std::string_view bytes, google::protobuf::MessageLite* msg) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream cis(reinterpret_cast<const uint8_t*>(bytes.data()),
                                             static_cast<int>(bytes.size()));
  cis.SetTotalBytesLimit(INT_MAX);
  return msg->ParseFromCodedStream(&cis) && cis.ConsumedEntireMessage();
}

std::string read_file_bytes(const std::string& path) {
  size_t size = 0;
  int fd = open_regular(path, &size);
  std::string out(size, '\0');
  size_t got = 0;
  while (got < size) {
    ssize_t r = ::read(fd, out.data() + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = errno;
      ::close(fd);
      throw_bad_input(path + ": read error: " + std::strerror(e));
    }
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  return out;
}

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void ByteSink::write_varint(uint64_t v) {
  uint8_t buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<uint8_t>(v);
  write(buf, n);
}

void ByteSink::write_len_field_header(uint32_t field, uint64_t len) {
  write_varint((static_cast<uint64_t>(field) << 3) | 2);
  write_varint(len);
}

FileSink::FileSink(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw_bad_input(path_ + ": cannot write: " + std::strerror(errno));
  std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
}

FileSink::~FileSink() {
  if (f_) {
    std::fclose(f_);
    std::remove(tmp_.c_str());
  }
}

void FileSink::write(const void* data, size_t n) {
  if (n && std::fwrite(data, 1, n, f_) != n) throw_bad_input(path_ + ": write error: " + std::strerror(errno));
}

void FileSink::commit() {
  bool ok = std::fflush(f_) == 0;
  ok = std::fclose(f_) == 0 && ok;
  f_ = nullptr;
  if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    std::remove(tmp_.c_str());
    throw_bad_input(path_ + ": write error: " + std::strerror(e));
  }
}

}  // namespace fusor
