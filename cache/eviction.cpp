// Least-recently-used eviction under a byte bound.
#include <cstdlib>
#include <string>

#include "cache/image_store.h"
#include "cache/payload.h"
#include "cache/sqlite.h"
#include "cache/store.h"

namespace fusor::cache {

int64_t default_max_bytes() {
  constexpr int64_t kDefaultMb = 1024;
  int64_t mb = kDefaultMb;
  if (const char* v = std::getenv("FUSOR_CACHE_MAX_MB"); v && *v) {
    char* end = nullptr;
    long long n = std::strtoll(v, &end, 10);
    if (end && *end == 0 && n >= 0) mb = n;
  }
  return mb * (int64_t{1} << 20);
}

void delete_entry(sqlite3* db, const std::string& key) {
  std::optional<ImageRef> ref;
  {
    Stmt q(db, "SELECT payload FROM payloads WHERE key=?");
    q.bind(1, std::string_view(key));
    if (q.step()) ref = decode_image_ref(q.blob_at(0));
  }
  Stmt(db, "DELETE FROM entries WHERE key=?").bind(1, std::string_view(key)).run();
  Stmt(db, "DELETE FROM payloads WHERE key=?").bind(1, std::string_view(key)).run();
  if (ref) release_image(db, ref->name);
}

int64_t evict_lru(sqlite3* db, int64_t max_bytes, const std::string& keep) {
  Stmt total(db, "SELECT COALESCE(SUM(size),0) FROM entries");
  total.step();
  int64_t bytes = total.int_at(0);
  if (bytes <= max_bytes) return 0;
  std::vector<std::pair<std::string, int64_t>> victims;
  {
    Stmt q(db, "SELECT key, size FROM entries WHERE key<>? ORDER BY last_used_ms ASC, rowid ASC");
    q.bind(1, std::string_view(keep));
    while (bytes > max_bytes && q.step()) {
      victims.emplace_back(q.text_at(0), q.int_at(1));
      bytes -= q.int_at(1);
    }
  }
  for (const auto& victim : victims) delete_entry(db, victim.first);
  return static_cast<int64_t>(victims.size());
}

}  // namespace fusor::cache
