// XXH3-128 (Debian's libxxhash, inlined here), the cache's one hash: for keys (model bytes,
// external data, rule texts, options), entry checksums and session-image sections. It runs at
// memory speed (a 46 MB model in a few milliseconds), so every hit can afford to hash the whole
// model. It is not cryptographic: it detects any accidental change (an edited model, a damaged
// file) with a 2^-128 chance of a miss, but does not resist someone forging a collision on
// purpose (the cache trusts the files of the user who owns it).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace fusor::cache {

class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void update(const void* data, size_t bytes);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // A length-prefixed part: ("ab","c") and ("a","bc") hash differently.
  void part(std::string_view bytes);
  // 32 lowercase hex digits.
  std::string hex() const;

 private:
  void* state_;
};

// 32 hex digits of XXH3-128.
std::string hash_hex(std::string_view bytes);
// The hash of a file's bytes (memory-mapped); false when it cannot be read.
bool hash_file(const std::string& path, std::string& hex);
// XXH3-64 of a block, for per-section checksums.
uint64_t hash64(const void* data, size_t bytes);

}  // namespace fusor::cache
