// What is at a cache path, decided without changing anything there: the gate that keeps every
// cache command and every run from creating, moving or writing a file that is not a fusor cache.
//
// A fusor cache is an SQLite file whose header carries fusor's application_id (set when the store
// is created), or, for caches made before the id existed, an SQLite file whose `meta` table says
// "fusor-cache-1". The decision reads the 100-byte SQLite header with plain read(2) and, only for
// an SQLite file without an application_id, opens it with SQLite's `immutable` URI (no lock, no
// -wal/-shm side files). Anything else (a missing path, a directory, a FIFO, a device, an empty
// file, a model, another program's database) is named in `detail` so the caller can refuse it.
#pragma once
#include <cstdint>
#include <string>

namespace fusor::cache {

// Stamped into the header of every store created (PRAGMA application_id): "FUSR".
constexpr int32_t kApplicationId = 0x46555352;

enum class PathKind {
  Missing,     // nothing at the path
  FusorCache,  // a fusor cache (possibly damaged beyond its header: opening tells)
  NotACache,   // something else: never touched
  Unreadable,  // exists but cannot be examined (permissions, I/O error)
};

struct PathIdentity {
  PathKind kind = PathKind::Missing;
  // For NotACache / Unreadable: what it is, e.g. "a directory", "an empty file", "not an SQLite
  // database", "an SQLite database of another program (no fusor tables)".
  std::string detail;
};

PathIdentity identify_cache_path(const std::string& path);

}  // namespace fusor::cache
