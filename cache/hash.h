// XXH3-128 (Debian's libxxhash, inlined here), the cache's one hash: for keys (model bytes,
// external data, rule texts, options), entry checksums and session-image sections. It runs at
// memory speed; still, a hit on an unchanged model file takes its hash from the store
// (cache/file_stamp.h) rather than reading tens of megabytes again. Files are hashed through a small
// buffer filled by pread, not through a mapping: touching every page of a fresh mapping costs more
// than the hash (a 46 MB model: ~32 ms mapped, ~11 ms read in 256 KB pieces, measured on this
// project's 2-core VM, where first touches of pages are expensive). It is not cryptographic: it detects any accidental change (an edited model, a damaged
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
// The hash of a file's bytes; false when it cannot be read.
bool hash_file(const std::string& path, std::string& hex);
// The same for the first `size` bytes of an open file (read with pread: the offset of `fd` is not
// moved); false on a read error or when the file is shorter than `size`.
bool hash_fd(int fd, uint64_t size, std::string& hex);
// XXH3-64 of a block, for per-section checksums.
uint64_t hash64(const void* data, size_t bytes);

}  // namespace fusor::cache
