// SHA-256 (OpenSSL's libcrypto, which uses the CPU's SHA extensions where present: ~1.8 GB/s
// here), the cache's one hash: for keys (model bytes, external data, rule texts) and for entry
// checksums. Strong, so two different inputs never share a cache entry in practice.
#pragma once
#include <string>
#include <string_view>

namespace fusor::cache {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  // A length-prefixed part: ("ab","c") and ("a","bc") hash differently.
  void part(std::string_view bytes);
  // 64 lowercase hex digits; the object must not be updated afterwards.
  std::string hex();

 private:
  void* ctx_;
};

std::string sha256_hex(std::string_view bytes);
// The hash of a file's bytes (memory-mapped); false when it cannot be read.
bool sha256_file(const std::string& path, std::string& hex);

}  // namespace fusor::cache
