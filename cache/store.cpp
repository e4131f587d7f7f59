#include "cache/store.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "cache/hash.h"
#include "cache/identify.h"
#include "cache/image_file.h"
#include "cache/image_store.h"
#include "cache/payload.h"
#include "cache/sqlite.h"
#include "core/util/log.h"

namespace fusor::cache {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "fusor-cache-1";
constexpr int kBusyTimeoutMs = 10000;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string checksum_of(std::string_view info, std::string_view payload) {
  Hasher h;
  h.part(info);
  h.part(payload);
  return h.hex();
}

// "20261129-221530-12345": when and by whom a damaged file was set aside.
std::string aside_suffix() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return std::string(buf) + "-" + std::to_string(::getpid());
}

// An exclusive flock on the cache's folder for the duration of a recovery, so two processes that
// both find the file damaged do not both rename (the second would move the first one's fresh
// store). The folder, not a side file: a lock creates nothing.
class RecoveryLock {
 public:
  explicit RecoveryLock(const std::string& path) {
    fs::path dir = fs::path(path).parent_path();
    fd_ = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~RecoveryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  int fd_ = -1;
};

// A unique name beside `path` for building a new store.
std::string temp_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".new-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

void remove_with_sides(const std::string& path) {
  std::error_code ec;
  for (const char* side : {"", "-wal", "-shm", "-journal"}) fs::remove(path + side, ec);
}

// Moves `from` to `to` unless `to` exists. False when `to` exists.
bool rename_no_replace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS) throw std::system_error(errno, std::generic_category(), "rename " + from);
  // A file system without RENAME_NOREPLACE: a hard link is just as exclusive.
  if (::link(from.c_str(), to.c_str()) != 0) {
    if (errno == EEXIST) return false;
    throw std::system_error(errno, std::generic_category(), "link " + to);
  }
  ::unlink(from.c_str());
  return true;
}

std::string not_a_cache_message(const std::string& path, const std::string& what) {
  return "cache " + path + ": " + what + ", not a fusor cache; nothing was changed (pass another --cache path)";
}

}  // namespace

std::string default_cache_path() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/fusor/cache.db";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/fusor/cache.db";
  return "";
}

void test_kill_point(const char* where) {
  const char* v = std::getenv("FUSOR_CACHE_TEST_KILL");
  if (v && std::string_view(v) == where) std::raise(SIGKILL);
}

OpenResult Store::open(const std::string& path, Access access, bool create) {
  using S = OpenResult::Status;
  OpenResult r;
  std::unique_ptr<Store> s(new Store(path, access));
  // Two rounds: a missing path may be created by another process between identifying and creating.
  for (int round = 0; round < 2; ++round) {
    PathIdentity id = identify_cache_path(path);
    if (id.kind == PathKind::NotACache) return {S::NotACache, nullptr, not_a_cache_message(path, id.detail)};
    if (id.kind == PathKind::Unreadable) return {S::Failed, nullptr, "cache " + path + ": cannot read it: " + id.detail};
    if (id.kind == PathKind::Missing) {
      if (access == Access::ReadOnly || !create) return {S::Missing, nullptr, "cache " + path + ": no cache there yet"};
      try {
        s->create_new();
      } catch (const std::exception& e) {
        return {S::Failed, nullptr, "cache " + path + ": cannot create it: " + e.what()};
      }
      continue;  // identify what is there now (ours, or whatever won the race)
    }
    try {
      s->connect();
      return {S::Opened, std::move(s), ""};
    } catch (const SqliteError& e) {
      if (!e.corrupt()) return {S::Failed, nullptr, "cache " + path + ": " + e.what()};
      if (access == Access::ReadOnly)
        return {S::Damaged, nullptr,
                "cache " + path + ": damaged (" + e.what() +
                    "); nothing was changed: `fusor cache verify --repair` or `fusor cache clear` moves it aside"};
      if (!s->recover(e.what())) return {S::Failed, nullptr, "cache " + path + ": damaged (" + e.what() + ") and " + s->problem_};
      std::string msg = s->recovered_;
      return {S::Opened, std::move(s), msg};
    } catch (const std::exception& e) {
      return {S::Failed, nullptr, "cache " + path + ": " + e.what()};
    }
  }
  return {S::Failed, nullptr, "cache " + path + ": it keeps changing while being opened"};
}

std::unique_ptr<Store> Store::open(const std::string& path) {
  OpenResult r = open(path, Access::ReadWrite, /*create=*/true);
  if (!r.store) {
    FUSOR_LOG(Warn) << r.message << "; running without the cache";
    return nullptr;
  }
  return std::move(r.store);  // a recovery was logged as it happened
}

Store::~Store() { close(); }

void Store::close() {
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
}

void Store::create_new() {
  fs::path p(path_);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::string tmp = temp_name(path_);
  sqlite3* db = nullptr;
  try {
    int rc = sqlite3_open_v2(tmp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) throw SqliteError(rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    // page_size only takes effect on a new, empty file (before WAL): large pages suit the
    // megabyte-sized payloads.
    exec(db, "PRAGMA page_size=16384");
    exec(db, "PRAGMA journal_mode=WAL");
    Transaction t(db);
    exec(db, ("PRAGMA application_id=" + std::to_string(kApplicationId)).c_str());
    exec(db,
         "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
         "CREATE TABLE entries(key TEXT PRIMARY KEY, model TEXT NOT NULL, providers TEXT NOT NULL,"
         " level TEXT NOT NULL, created_ms INTEGER NOT NULL, last_used_ms INTEGER NOT NULL,"
         " hits INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL, checksum TEXT NOT NULL, info TEXT NOT NULL);"
         "CREATE TABLE payloads(key TEXT PRIMARY KEY, payload BLOB NOT NULL);"
         "CREATE INDEX entries_lru ON entries(last_used_ms);");
    Stmt(db, "INSERT INTO meta(key, value) VALUES('format', ?)").bind(1, std::string_view(kFormat)).run();
    t.commit();
    // Closing the only connection checkpoints the WAL into the file and removes -wal/-shm.
    int crc = sqlite3_close(db);
    db = nullptr;
    if (crc != SQLITE_OK) throw SqliteError(crc, "cannot close the new store");
    if (!rename_no_replace(tmp, path_)) remove_with_sides(tmp);  // another process made one first
  } catch (...) {
    if (db) sqlite3_close_v2(db);
    remove_with_sides(tmp);
    throw;
  }
}

void Store::connect() {
  close();
  // No SQLITE_OPEN_CREATE: the file was identified as a fusor cache, and a path that has gone
  // since is not recreated here.
  int rc = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open: " + std::string(db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    int code = db_ ? sqlite3_extended_errcode(db_) : rc;
    close();
    throw SqliteError(code, msg);
  }
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  // Read-only access: SQLite itself refuses every write on this connection. (Opened read-write
  // all the same: a read-only connection leaves the -wal/-shm files of a WAL database behind.)
  if (access_ == Access::ReadOnly) exec(db_, "PRAGMA query_only=1");
  exec(db_, "PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=67108864; PRAGMA mmap_size=268435456");

  // Our schema and format. The file was identified as a fusor cache, so missing tables mean damage.
  int64_t ours = 0, tables = 0;
  {
    Stmt q(db_, "SELECT COUNT(*), COALESCE(SUM(name IN ('meta','entries','payloads')),0) FROM sqlite_master WHERE type='table'");
    q.step();
    tables = q.int_at(0);
    ours = q.int_at(1);
  }
  if (ours != 3 || tables != 3) throw SqliteError(SQLITE_CORRUPT, "its tables are missing or unexpected");
  std::string format;
  {
    Stmt f(db_, "SELECT value FROM meta WHERE key='format'");
    if (f.step()) format = f.text_at(0);
  }
  if (format != kFormat)
    throw SqliteError(SQLITE_ERROR, "a cache of another fusor version (format '" + format + "', this one reads '" +
                                        std::string(kFormat) + "'); nothing was changed");
  if (access_ == Access::ReadWrite) {
    Stmt q(db_, "PRAGMA application_id");
    q.step();
    if (q.int_at(0) != kApplicationId)  // a cache made before the id existed
      exec(db_, ("PRAGMA application_id=" + std::to_string(kApplicationId)).c_str());
  }
}

bool Store::recover(const std::string& why) {
  close();
  if (access_ != Access::ReadWrite) {
    problem_ = "damaged (" + why + ")";
    return false;
  }
  std::string aside;
  {
    RecoveryLock lock(path_);
    struct stat st {};
    bool same = ::stat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
    if (same) {
      aside = path_ + ".corrupt-" + aside_suffix();
      std::error_code ec;
      fs::rename(path_, aside, ec);
      if (ec) {
        problem_ = "cannot move it aside (" + ec.message() + ")";
        FUSOR_LOG(Warn) << "cache " << path_ << ": " << why << "; " << problem_ << "; running without the cache";
        return false;
      }
      for (const char* side : {"-wal", "-shm"})
        if (fs::exists(path_ + side)) fs::rename(path_ + side, aside + side, ec);
    }
  }
  if (!aside.empty())
    recovered_ = "cache " + path_ + ": " + why + "; moved it aside to " + aside + " and started a new cache";
  else
    recovered_ = "cache " + path_ + ": " + why + "; another process already replaced it";
  FUSOR_LOG(Warn) << recovered_;
  try {
    if (identify_cache_path(path_).kind == PathKind::Missing) create_new();
    if (identify_cache_path(path_).kind != PathKind::FusorCache) throw std::runtime_error("what is there now is not a fusor cache");
    connect();
    return true;
  } catch (const std::exception& e) {
    problem_ = std::string("cannot start a new cache: ") + e.what();
    FUSOR_LOG(Warn) << "cache " << path_ << ": " << problem_ << "; running without the cache";
    close();
    return false;
  }
}

template <class T, class Op>
T Store::guarded(const char* what, T fallback, Op op) {
  if (!db_) return fallback;
  try {
    return op();
  } catch (const SqliteError& e) {
    if (!e.corrupt()) {
      problem_ = std::string(what) + ": " + e.what();
      FUSOR_LOG(Warn) << "cache " << path_ << ": " << problem_ << " (the cache is skipped)";
      return fallback;
    }
    if (!recover(e.what())) return fallback;
  }
  try {
    return op();
  } catch (const SqliteError& e) {
    problem_ = std::string(what) + ": " + e.what();
    FUSOR_LOG(Warn) << "cache " << path_ << ": " << problem_ << " (the cache is skipped)";
    return fallback;
  }
}

std::optional<Fetched> Store::get(const std::string& key) {
  return guarded<std::optional<Fetched>>("read", std::nullopt, [&]() -> std::optional<Fetched> {
    Fetched f;
    std::string sum;
    int64_t last_used = 0;
    {
      Stmt q(db_,
             "SELECT e.info, p.payload, e.checksum, e.last_used_ms FROM entries e JOIN payloads p ON p.key=e.key"
             " WHERE e.key=?");
      q.bind(1, std::string_view(key));
      if (!q.step()) return std::nullopt;
      f.info = q.text_at(0);
      f.payload = std::string(q.blob_at(1));
      sum = q.text_at(2);
      last_used = q.int_at(3);
    }
    if (checksum_of(f.info, f.payload) != sum) {
      if (access_ == Access::ReadOnly) {
        FUSOR_LOG(Warn) << "cache " << path_ << ": entry " << key.substr(0, 16) << " failed its checksum";
        return std::nullopt;
      }
      FUSOR_LOG(Warn) << "cache " << path_ << ": entry " << key.substr(0, 16)
                      << " failed its checksum; dropped it (it is rebuilt)";
      Transaction t(db_);
      delete_entry(db_, key);
      t.commit();
      return std::nullopt;
    }
    if (access_ == Access::ReadWrite && now_ms() - last_used >= recency_ms_) {
      try {
        Stmt(db_, "UPDATE entries SET last_used_ms=?, hits=hits+1 WHERE key=?")
            .bind(1, now_ms())
            .bind(2, std::string_view(key))
            .run();
      } catch (const SqliteError& e) {
        if (e.corrupt()) throw;
        FUSOR_LOG(Info) << "cache: could not record the hit: " << e.what();  // recency only
      }
    }
    return f;
  });
}

bool Store::put(const std::string& key, const EntryMeta& meta, const std::string& info, const std::string& payload,
                int64_t max_bytes, int64_t image_bytes, const std::function<void()>& publish) {
  if (access_ == Access::ReadOnly) return false;
  int64_t size = static_cast<int64_t>(info.size() + payload.size()) + image_bytes;
  if (size > max_bytes) {
    FUSOR_LOG(Info) << "cache: entry of " << size << " bytes exceeds the bound of " << max_bytes << "; not stored";
    return false;
  }
  std::string sum = checksum_of(info, payload);
  return guarded("write", false, [&] {
    Transaction t(db_);
    int64_t now = now_ms();
    // The image an entry being replaced refers to goes with it (unless it is the same file).
    std::optional<ImageRef> old;
    {
      Stmt q(db_, "SELECT payload FROM payloads WHERE key=?");
      q.bind(1, std::string_view(key));
      if (q.step()) old = decode_image_ref(q.blob_at(0));
    }
    if (publish) publish();
    test_kill_point("image-publish");
    Stmt(db_,
         "INSERT OR REPLACE INTO entries(key, model, providers, level, created_ms, last_used_ms, hits, size, checksum,"
         " info) VALUES(?,?,?,?,?,?,0,?,?,?)")
        .bind(1, std::string_view(key))
        .bind(2, std::string_view(meta.model))
        .bind(3, std::string_view(meta.providers))
        .bind(4, std::string_view(meta.level))
        .bind(5, now)
        .bind(6, now)
        .bind(7, size)
        .bind(8, std::string_view(sum))
        .bind(9, std::string_view(info))
        .run();
    Stmt(db_, "INSERT OR REPLACE INTO payloads(key, payload) VALUES(?,?)")
        .bind(1, std::string_view(key))
        .bind_blob(2, payload)
        .run();
    test_kill_point("put");
    if (old) release_image(db_, old->name);
    evict_lru(db_, max_bytes, key);
    sweep_images(db_);
    t.commit();
    return true;
  });
}

void Store::drop(const std::string& key, const std::string& payload, const std::string& why) {
  if (access_ == Access::ReadOnly) return;
  bool dropped = guarded("drop", false, [&] {
    Transaction t(db_);
    bool same = false;
    {
      Stmt q(db_, "SELECT payload FROM payloads WHERE key=?");
      q.bind(1, std::string_view(key));
      same = q.step() && q.blob_at(0) == payload;
    }
    if (same) delete_entry(db_, key);
    t.commit();
    return same;
  });
  if (dropped) {
    FUSOR_LOG(Warn) << "cache " << path_ << ": entry " << key.substr(0, 16) << ": " << why
                    << "; dropped it (it is rebuilt)";
  }
}

std::string Store::images_dir() const { return images_dir_of(path_); }

std::vector<EntryRow> Store::list() {
  return guarded<std::vector<EntryRow>>("list", {}, [&] {
    std::vector<EntryRow> rows;
    Stmt q(db_,
           "SELECT key, model, providers, level, created_ms, last_used_ms, hits, size FROM entries"
           " ORDER BY last_used_ms DESC, rowid DESC");
    while (q.step()) {
      EntryRow r;
      r.key = q.text_at(0);
      r.meta = {q.text_at(1), q.text_at(2), q.text_at(3)};
      r.created_ms = q.int_at(4);
      r.last_used_ms = q.int_at(5);
      r.hits = q.int_at(6);
      r.size = q.int_at(7);
      rows.push_back(std::move(r));
    }
    return rows;
  });
}

StoreStats Store::stats() {
  StoreStats s;
  s.path = path_;
  s = guarded<StoreStats>("stats", s, [&] {
    StoreStats r;
    r.path = path_;
    Stmt q(db_, "SELECT COUNT(*), COALESCE(SUM(size),0), COALESCE(SUM(hits),0) FROM entries");
    q.step();
    r.entries = q.int_at(0);
    r.bytes = q.int_at(1);
    r.hits = q.int_at(2);
    return r;
  });
  std::error_code ec;
  for (const char* side : {"", "-wal"}) {
    auto n = fs::file_size(path_ + side, ec);
    if (!ec) s.file_bytes += static_cast<int64_t>(n);
  }
  return s;
}

VerifyReport Store::verify(bool repair) {
  repair = repair && access_ == Access::ReadWrite;
  VerifyReport rep;
  auto run = [&] {
    VerifyReport r;
    {
      Stmt q(db_, "PRAGMA integrity_check");
      if (q.step()) r.integrity = q.text_at(0);
    }
    r.integrity_ok = r.integrity == "ok";
    if (!r.integrity_ok) throw SqliteError(SQLITE_CORRUPT, "integrity check failed: " + r.integrity);
    Stmt q(db_, "SELECT e.key, e.info, COALESCE(p.payload, x''), e.checksum FROM entries e LEFT JOIN payloads p ON p.key=e.key");
    while (q.step()) {
      ++r.entries;
      if (checksum_of(q.text_at(1), q.blob_at(2)) != q.text_at(3)) {
        r.bad_keys.push_back(q.text_at(0));
        r.problems.push_back("entry checksum mismatch");
        continue;
      }
      if (auto ref = decode_image_ref(q.blob_at(2))) {
        ++r.images;
        std::string why;
        if (!MappedImage::open(images_dir() + "/" + ref->name, "", ImageCheck::Full, &why)) {
          r.bad_keys.push_back(q.text_at(0));
          r.problems.push_back("image " + ref->name + ": " + why);
        }
      }
    }
    return r;
  };
  if (!db_) return rep;
  try {
    rep = run();
  } catch (const SqliteError& e) {
    if (!e.corrupt()) {
      FUSOR_LOG(Warn) << "cache " << path_ << ": verify: " << e.what();
      rep.integrity_ok = false;
      rep.integrity = e.what();
      return rep;
    }
    rep.integrity_ok = false;
    rep.integrity = e.what();
    if (repair) recover(e.what());
    return rep;
  }
  if (repair) {
    guarded("verify", 0, [&] {
      Transaction t(db_);
      for (const std::string& k : rep.bad_keys) delete_entry(db_, k);
      sweep_images(db_);
      t.commit();
      return 0;
    });
    for (size_t i = 0; i < rep.bad_keys.size(); ++i)
      FUSOR_LOG(Warn) << "cache " << path_ << ": entry " << rep.bad_keys[i].substr(0, 16) << ": " << rep.problems[i]
                      << "; dropped it";
  }
  return rep;
}

int64_t Store::clear() {
  if (access_ == Access::ReadOnly) {
    problem_ = "clear: opened read-only";
    return -1;
  }
  int64_t n = guarded("clear", int64_t{-1}, [&] {
    Transaction t(db_);
    Stmt q(db_, "SELECT COUNT(*) FROM entries");
    q.step();
    int64_t count = q.int_at(0);
    exec(db_, "DELETE FROM entries; DELETE FROM payloads; DELETE FROM meta WHERE key LIKE 'file-hash:%' OR key LIKE 'model-file:%'");
    sweep_images(db_);
    t.commit();
    return count;
  });
  // Give the space back; skipped quietly when another process holds the file.
  if (db_ && n >= 0) sqlite3_exec(db_, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  return n;
}

std::optional<RememberedFile> Store::remembered_file(const FileStamp& s) {
  return guarded<std::optional<RememberedFile>>("read", std::nullopt, [&]() -> std::optional<RememberedFile> {
    Stmt q(db_, "SELECT value FROM meta WHERE key=?");
    const std::string row = "model-file:" + s.identity();
    q.bind(1, std::string_view(row));
    if (!q.step()) return std::nullopt;
    const std::string v = q.text_at(0);  // "SIZE MTIME CTIME HASH" then "\nLOCATION" per location
    const std::string change = s.change();
    const size_t head = change.size() + 33;
    if (v.size() < head || v.compare(0, change.size(), change) != 0 || v[change.size()] != ' ' ||
        (v.size() > head && v[head] != '\n'))
      return std::nullopt;
    RememberedFile f;
    f.hash = v.substr(change.size() + 1, 32);
    for (size_t at = head; at < v.size();) {
      const size_t end = std::min(v.find('\n', at + 1), v.size());
      f.external.push_back(v.substr(at + 1, end - at - 1));
      at = end;
    }
    return f;
  });
}

void Store::remember_file(const FileStamp& s, const RememberedFile& f) {
  if (access_ == Access::ReadOnly || f.hash.size() != 32) return;
  std::string value = s.change() + " " + f.hash;
  for (const std::string& loc : f.external) {
    if (loc.find('\n') != std::string::npos) return;
    value += "\n" + loc;
  }
  guarded("write", false, [&] {
    const std::string row = "model-file:" + s.identity();
    Stmt(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)")
        .bind(1, std::string_view(row))
        .bind(2, std::string_view(value))
        .run();
    return true;
  });
}

}  // namespace fusor::cache
