// The optimized-session store: one SQLite file (WAL mode) shared safely by concurrent processes.
//
// Schema (format "fusor-cache-1" in table meta):
//   entries(key TEXT PRIMARY KEY, model TEXT, providers TEXT, level TEXT, created_ms, last_used_ms,
//           hits, size, checksum TEXT, info TEXT)
//   payloads(key TEXT PRIMARY KEY, payload BLOB)   -- apart, so recording a hit rewrites a small
//                                                     row instead of the megabytes of the blob
// `info` and `payload` are opaque here (cache/payload.h gives them meaning); `checksum` is the
// XXH3-128 of both, checked on every fetch. A payload may refer to a session image, a file in
// "<database>.images/" (cache/image_store.h has the rules for those files); `size` counts it.
//
// Safety contract:
// - Nothing that is not a fusor cache is ever created over, moved or written: the path is
//   identified first (cache/identify.h) and anything else (a model, a directory, a FIFO, an empty
//   file, another program's database) is refused untouched.
// - A new store is built under a temporary name and renamed into place without replacing
//   anything (RENAME_NOREPLACE), so a path never holds a half-made cache.
// - Read-only access (`fusor cache list|stats|verify`) creates, moves and writes nothing: a
//   missing cache is reported as missing, a damaged one as damaged.
// - Every write is one BEGIN IMMEDIATE transaction, so a process killed mid-write leaves the
//   previous state (SQLite's journal). Readers and writers wait for each other up to the busy
//   timeout (10 s) instead of failing.
// - Only with read-write access, a file that was a fusor cache and is now damaged (SQLite reports
//   corruption, its tables are gone) is renamed aside ("cache.db.corrupt-YYYYmmdd-HHMMSS-PID",
//   with its -wal/-shm; nothing is deleted; an flock on the folder serializes this between
//   processes) and a fresh store is started. This happens at open and whenever SQLite reports
//   corruption later.
// - An entry whose checksum fails is deleted (read-write) and reported as absent, so the caller
//   rebuilds it.
// - Any other failure (read-only directory, disk full, lock timeout) makes the store behave as
//   empty for that call and is kept in problem(): the cache never makes a run fail.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/file_stamp.h"

struct sqlite3;

namespace fusor::cache {

// $XDG_CACHE_HOME/fusor/cache.db, else $HOME/.cache/fusor/cache.db ("" when neither is set).
std::string default_cache_path();
// The size bound in bytes: $FUSOR_CACHE_MAX_MB (megabytes, 1 MB = 2^20 bytes) when set, else 1 GiB.
int64_t default_max_bytes();

struct EntryMeta {
  std::string model;      // where the model came from (for `fusor cache list`)
  std::string providers;  // "cpu"
  std::string level;      // "all"
};

struct EntryRow {
  std::string key;
  EntryMeta meta;
  int64_t created_ms = 0, last_used_ms = 0, hits = 0, size = 0;
};

struct Fetched {
  std::string info, payload;
};

struct StoreStats {
  std::string path;
  int64_t entries = 0, bytes = 0, hits = 0;
  int64_t file_bytes = 0;  // the database file plus its WAL
};

struct VerifyReport {
  bool integrity_ok = true;
  std::string integrity;              // "ok" or SQLite's first complaint
  int64_t entries = 0;
  int64_t images = 0;                 // session images checked (every section's checksum)
  std::vector<std::string> bad_keys;  // checksum failures, missing or damaged images (dropped when verify(drop=true))
  std::vector<std::string> problems;  // per bad key: what was wrong
};

enum class Access { ReadOnly, ReadWrite };

// A model file's facts that depend only on its bytes (Store::remembered_file).
struct RememberedFile {
  std::string hash;                   // XXH3-128, 32 hex digits
  std::vector<std::string> external;  // its external-data locations, sorted (external_refs.h)
  bool operator==(const RememberedFile&) const = default;
};

class Store;

struct OpenResult {
  enum class Status { Opened, Missing, NotACache, Damaged, Failed };
  Status status = Status::Failed;
  std::unique_ptr<Store> store;  // set when Opened
  // Why it was not opened ("cache PATH: a directory, not a fusor cache; nothing was changed"),
  // or, when Opened after moving a damaged cache aside, what was done.
  std::string message;
};

class Store {
 public:
  // ReadOnly: opens an existing fusor cache; never creates, moves or writes anything (a missing
  // path is Missing, a damaged cache Damaged). ReadWrite: creates a missing store when `create`
  // (its folder too), moves a damaged fusor cache aside and starts a new one. Both refuse a path
  // that is not a fusor cache (NotACache). Never throws.
  static OpenResult open(const std::string& path, Access access, bool create);
  // For runs (sessions): ReadWrite, creating. A warning, and nullptr, when no store can be used.
  static std::unique_ptr<Store> open(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  // Default 60 s; 0 records every hit (tests).
  void set_recency_granularity_ms(int64_t ms) { recency_ms_ = ms; }

  // The entry, checksum-verified; nullopt when absent, dropped for a bad checksum, or the store
  // failed (warnings say which). The hit is recorded (hits + 1, last_used_ms = now) only when the
  // entry was last used at least recency_granularity_ms ago: a hit is then read-only, which
  // spares it a WAL write and the syncs of the checkpoint at close (~10-25 ms here).
  // LRU order is exact up to that granularity. Read-only access records nothing.
  std::optional<Fetched> get(const std::string& key);
  // Inserts or replaces the entry, then evicts least-recently-used entries until the store
  // holds at most `max_bytes` of entries (an entry larger than the bound is not stored).
  // `image_bytes`: the size of the session image the payload refers to; `publish` (renaming that
  // image into the folder) runs inside the write transaction, before the insert.
  // Returns false (after a warning) when nothing was stored (always with read-only access).
  bool put(const std::string& key, const EntryMeta& meta, const std::string& info, const std::string& payload,
           int64_t max_bytes, int64_t image_bytes = 0, const std::function<void()>& publish = {});
  // Deletes an entry whose image turned out missing or damaged, with a warning saying `why`, if
  // it still holds `payload` (another process may have replaced or evicted it meanwhile: then
  // nothing is deleted and nothing is said).
  void drop(const std::string& key, const std::string& payload, const std::string& why);
  // The folder of this store's session images.
  std::string images_dir() const;

  std::vector<EntryRow> list();
  StoreStats stats();
  // SQLite's integrity_check plus every entry's checksum and every image's section checksums;
  // with `repair` (read-write access only), bad entries are deleted (their images too), orphaned
  // images swept and a damaged file is moved aside.
  VerifyReport verify(bool repair);
  // Deletes every entry and image (read-write access); returns how many there were, -1 on failure.
  // Remembered file hashes go too.
  int64_t clear();

  // What is remembered of a model file whose stamp is exactly `s` (cache/file_stamp.h says why a
  // stamp identifies the bytes): its hash and the external-data locations it names, both functions
  // of its bytes, so a hit reads neither the whole file nor its tensor headers. nullopt when none
  // or the store failed. Rows live in table meta (key "model-file:DEV:INO"; the earlier
  // "file-hash:" rows, without the locations, are ignored), so the schema is unchanged and older
  // fusor builds ignore them.
  std::optional<RememberedFile> remembered_file(const FileStamp& s);
  // Remembers `f` for `s` (read-write access; the caller checks that `s` is settled). Not
  // remembered: a hash that is not 32 hex digits, a location holding a newline. A store failure
  // is only logged: the next run reads the file again.
  void remember_file(const FileStamp& s, const RememberedFile& f);

  Access access() const { return access_; }
  // The last failure an operation fell back from ("" when none): read-only commands report it.
  const std::string& problem() const { return problem_; }
  // What recovery did ("moved it aside to ...") when this store moved a damaged file aside.
  const std::string& recovered() const { return recovered_; }

 private:
  Store(std::string path, Access access) : path_(std::move(path)), access_(access) {}
  // Opens path_, which was identified as a fusor cache; throws SqliteError.
  void connect();
  void close();
  // Builds an empty store under a temporary name and renames it to path_ unless something is
  // there by then (another process made it). Throws SqliteError or std::system_error.
  void create_new();
  // Renames the damaged file aside and starts a fresh store (read-write only; warnings). False
  // when even the fresh store cannot be opened.
  bool recover(const std::string& why);
  // Runs `op`, recovering once from corruption; other SQLite errors become a warning and
  // `fallback`.
  template <class T, class Op>
  T guarded(const char* what, T fallback, Op op);

  std::string path_;
  Access access_;
  std::string problem_, recovered_;
  sqlite3* db_ = nullptr;
  int64_t recency_ms_ = 60000;
  uint64_t dev_ = 0, ino_ = 0;  // of the file this connection opened (so recovery renames only it)
};

// Deletes least-recently-used entries (never `keep`) until the entries' sizes sum to at most
// `max_bytes`; returns how many were deleted. Call inside a write transaction.
int64_t evict_lru(sqlite3* db, int64_t max_bytes, const std::string& keep);
// Deletes one entry and its payload, and its image unless another entry refers to it. Call
// inside a write transaction.
void delete_entry(sqlite3* db, const std::string& key);

// Test hook: when $FUSOR_CACHE_TEST_KILL equals a kill point's name, the process kills itself
// (SIGKILL) there: "put" inside the write transaction, after the entry's INSERT and before COMMIT;
// "image-write" halfway through writing a session image; "image-publish" after the image's
// rename, before the entry's INSERT.
void test_kill_point(const char* where);

}  // namespace fusor::cache
