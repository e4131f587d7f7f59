// The cache key: one XXH3-128 (cache/hash.h) over named, length-prefixed fields. Whoever builds a key adds every
// input that can change the optimized result (engine/session/optimize_cached.cpp lists them:
// model and external-data bytes, providers, level, rule and provider texts, --disable,
// --no-default-rules, --dim/--shape, engine build, CPU features); two keys are equal only when
// every field is. Field names are part of the hash, so adding a field never aliases an old key.
#pragma once
#include <string>
#include <string_view>

#include "cache/hash.h"

namespace fusor::cache {

// Bumped when the key fields or the payload format change meaning.
// 2: XXH3-128 keys, payloads that refer to session images (issue 17).
inline constexpr int kCacheFormat = 2;

class KeyBuilder {
 public:
  KeyBuilder();
  void add(std::string_view field, std::string_view value);
  // The file's hash under `field`, or a marker naming the path when it cannot be read (the
  // key then differs from any readable file's; the loader reports the missing file).
  void add_file(std::string_view field, const std::string& path);
  std::string finish() { return h_.hex(); }

 private:
  Hasher h_;
};

// The CPU features kernels choose their paths by ("avx2,fma,avx512f,..."): a cached model that
// was shaped for one machine's kernels is not reused on another.
std::string cpu_features();
// The identity of the engine's build: the ELF build-id of the object fusor's code is in (the
// program, or the shared object that holds it, e.g. the Python module) when the linker wrote one,
// else that file's size and modification time. Any rebuild of the engine changes it.
std::string build_identity();

}  // namespace fusor::cache
