#include "cache/hash.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace fusor::cache {

namespace {
EVP_MD_CTX* md(void* p) { return static_cast<EVP_MD_CTX*>(p); }
}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(md(ctx_), EVP_sha256(), nullptr) != 1) throw std::runtime_error("sha256: init failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(md(ctx_)); }

void Sha256::update(std::string_view bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(md(ctx_), bytes.data(), bytes.size());
}

void Sha256::part(std::string_view bytes) {
  unsigned char len[8];
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  EVP_DigestUpdate(md(ctx_), len, sizeof len);
  update(bytes);
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(md(ctx_), digest, &n);
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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  Sha256 h;
  if (st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return false;
    }
    h.update(std::string_view(static_cast<const char*>(p), static_cast<size_t>(st.st_size)));
    ::munmap(p, static_cast<size_t>(st.st_size));
  }
  ::close(fd);
  hex = h.hex();
  return true;
}

}  // namespace fusor::cache
