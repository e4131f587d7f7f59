#include "cache/hash.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "core/util/regular_file.h"
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace fusor::cache {

namespace {
XXH3_state_t* st(void* p) { return static_cast<XXH3_state_t*>(p); }
}  // namespace

Hasher::Hasher() : state_(XXH3_createState()) { XXH3_128bits_reset(st(state_)); }

Hasher::~Hasher() { XXH3_freeState(st(state_)); }

void Hasher::update(const void* data, size_t bytes) {
  if (bytes) XXH3_128bits_update(st(state_), data, bytes);
}

void Hasher::part(std::string_view bytes) {
  unsigned char len[8];
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  update(len, sizeof len);
  update(bytes);
}

std::string Hasher::hex() const {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st(state_)));
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof c.digest);
  for (unsigned char b : c.digest) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string hash_hex(std::string_view bytes) {
  Hasher h;
  h.update(bytes);
  return h.hex();
}

bool hash_fd(int fd, uint64_t size, std::string& hex) {
  // 256 KB: stays in L2 between the kernel's copy and the hash (measured best of 64 KB-1 MB).
  // A small file (a rule text of the key) gets a buffer of its own size, not a fresh 256 KB mapping.
  const size_t chunk = static_cast<size_t>(std::min<uint64_t>(uint64_t{256} << 10, std::max<uint64_t>(size, 1)));
  std::unique_ptr<char[]> buf(new char[chunk]);
  Hasher h;
  uint64_t off = 0;
  while (off < size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(chunk, size - off));
    const ssize_t n = ::pread(fd, buf.get(), want, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    h.update(buf.get(), static_cast<size_t>(n));
    off += static_cast<uint64_t>(n);
  }
  hex = h.hex();
  return true;
}

bool hash_file(const std::string& path, std::string& hex) {
  size_t size = 0;
  int fd = open_regular_file(path, &size, nullptr);
  if (fd < 0) return false;
  const bool ok = hash_fd(fd, size, hex);
  ::close(fd);
  return ok;
}

uint64_t hash64(const void* data, size_t bytes) { return XXH3_64bits(data, bytes); }

}  // namespace fusor::cache
