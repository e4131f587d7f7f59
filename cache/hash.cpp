#include "cache/hash.h"

#include <fcntl.h>
// The low-level SHA256_* functions: deprecated in OpenSSL 3 in favour of EVP, whose first use
// loads the provider machinery (several milliseconds, paid by every cache hit); these run the
// same SHA-NI code directly.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util/regular_file.h"
#include <cstdint>

namespace fusor::cache {

namespace {
SHA256_CTX* md(void* p) { return static_cast<SHA256_CTX*>(p); }
}  // namespace

Sha256::Sha256() : ctx_(new SHA256_CTX) { SHA256_Init(md(ctx_)); }

Sha256::~Sha256() { delete md(ctx_); }

void Sha256::update(std::string_view bytes) {
  if (!bytes.empty()) SHA256_Update(md(ctx_), bytes.data(), bytes.size());
}

void Sha256::part(std::string_view bytes) {
  unsigned char len[8];
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  SHA256_Update(md(ctx_), len, sizeof len);
  update(bytes);
}

std::string Sha256::hex() {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  const unsigned n = SHA256_DIGEST_LENGTH;
  SHA256_Final(digest, md(ctx_));
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (unsigned i = 0; i < n; ++i) {
    out += digits[digest[i] >> 4];
    out += digits[digest[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex();
}

bool sha256_file(const std::string& path, std::string& hex) {
  size_t size = 0;
  int fd = open_regular_file(path, &size, nullptr);
  if (fd < 0) return false;
  Sha256 h;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return false;
    }
    h.update(std::string_view(static_cast<const char*>(p), size));
    ::munmap(p, size);
  }
  ::close(fd);
  hex = h.hex();
  return true;
}

}  // namespace fusor::cache
