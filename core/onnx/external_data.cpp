#include "core/onnx/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <filesystem>

#include "core/util/error.h"

namespace fusor {

namespace {

// A private (copy-on-write) read mapping of a whole file.
class MappedFile : public Buffer {
 public:
  MappedFile(void* p, size_t n) : p_(p), n_(n) {}
  ~MappedFile() override {
    if (p_ && n_) ::munmap(p_, n_);
  }
  void* data() override { return p_; }
  size_t size() const override { return n_; }

 private:
  void* p_;
  size_t n_;
};

uint64_t parse_u64(const std::string& key, const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    throw_bad_input("external data " + key + " '" + text + "' is not a non-negative integer");
  return std::stoull(text);
}

}  // namespace

std::shared_ptr<Buffer> ExternalDataReader::map_file(const std::string& location) {
  auto it = files_.find(location);
  if (it != files_.end()) return it->second;
  namespace fs = std::filesystem;
  fs::path rel(location);
  if (location.empty() || rel.is_absolute())
    throw_bad_input("external data location '" + location + "' must be a relative path");
  for (const auto& part : rel)
    if (part == "..") throw_bad_input("external data location '" + location + "' leaves the model's directory");
  const fs::path base = base_dir_.empty() ? fs::path(".") : fs::path(base_dir_);
  std::string full = (base / rel).string();
  // The lexical check above is not enough: a symlink inside the folder may point anywhere. The
  // real path must be inside the folder's real path.
  std::error_code ec;
  fs::path real = fs::canonical(full, ec);
  if (ec) throw_bad_input("external data file '" + full + "': " + ec.message());
  fs::path real_base = fs::canonical(base, ec);
  if (ec) throw_bad_input("external data folder '" + base.string() + "': " + ec.message());
  auto [b, r] = std::mismatch(real_base.begin(), real_base.end(), real.begin(), real.end());
  if (b != real_base.end())
    throw_bad_input("external data location '" + location + "' resolves to '" + real.string() +
                    "', outside the model's directory '" + real_base.string() + "'");
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below).
  int fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw_bad_input("external data file '" + full + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_bad_input("external data file '" + full + "' is not a regular file");
  }
  size_t n = static_cast<size_t>(st.st_size);
  void* p = nullptr;
  if (n) {
    p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      throw_bad_input("external data file '" + full + "': mmap failed: " + std::strerror(e));
    }
  }
  ::close(fd);
  auto buf = std::make_shared<MappedFile>(p, n);
  files_.emplace(location, buf);
  return buf;
}

Tensor ExternalDataReader::load(const onnx::TensorProto& tp, DataType dtype, const Shape& shape) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool has_length = false;
  for (const auto& kv : tp.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = parse_u64("offset", kv.value());
    else if (kv.key() == "length") { length = parse_u64("length", kv.value()); has_length = true; }
  }
  if (location.empty()) throw_bad_input("external data has no 'location'");
  if (dtype == DataType::String) throw_bad_input("string tensors cannot use external data");
  std::shared_ptr<Buffer> file = map_file(location);
  std::optional<size_t> checked = checked_nbytes(shape, dtype_size(dtype));
  if (!checked) throw_bad_input("tensor shape " + shape_str(shape) + " has more bytes than a 64-bit count can hold");
  size_t need = *checked;
  if (has_length && length != need)
    throw_bad_input("external data length " + std::to_string(length) + " does not match the " +
                    std::to_string(need) + " bytes of a " + dtype_name(dtype) + " tensor of shape " + shape_str(shape));
  if (offset > file->size() || need > file->size() - offset)
    throw_bad_input("external data in '" + location + "' at offset " + std::to_string(offset) + " needs " +
                    std::to_string(need) + " bytes but the file has " + std::to_string(file->size()));
  return Tensor(dtype, shape, std::move(file), static_cast<size_t>(offset));
}

ExternalDataWriter::ExternalDataWriter(std::string data_path, std::string location)
    : path_(std::move(data_path)), tmp_(path_ + ".tmp"), location_(std::move(location)) {
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw_bad_input("cannot write '" + path_ + "': " + std::strerror(errno));
}

ExternalDataWriter::~ExternalDataWriter() {
  if (f_) {
    std::fclose(f_);
    std::remove(tmp_.c_str());
  }
}

void ExternalDataWriter::write(const Tensor& t, onnx::TensorProto* tp) {
  // Keep each tensor 64-byte aligned in the file so a mapping of it is aligned too.
  static const char zeros[64] = {};
  size_t pad = static_cast<size_t>((64 - offset_ % 64) % 64);
  if (pad && std::fwrite(zeros, 1, pad, f_) != pad) throw_bad_input("write error on '" + path_ + "'");
  offset_ += pad;
  size_t n = t.nbytes();
  if (n && std::fwrite(t.raw(), 1, n, f_) != n) throw_bad_input("write error on '" + path_ + "'");
  tp->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = tp->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location_);
  add("offset", std::to_string(offset_));
  add("length", std::to_string(n));
  offset_ += n;
}

void ExternalDataWriter::finish() {
  if (!f_) return;
  bool ok = std::fflush(f_) == 0;
  ok = std::fclose(f_) == 0 && ok;
  f_ = nullptr;
  if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    throw_bad_input("write error on '" + path_ + "'");
  }
}

}  // namespace fusor
