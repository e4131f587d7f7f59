#include "cache/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "cache/hash.h"
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
  Sha256 h;
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

// An exclusive flock on PATH.lock for the duration of a recovery, so two processes that both
// find the file damaged do not both rename (the second would move the first one's fresh store).
class RecoveryLock {
 public:
  explicit RecoveryLock(const std::string& path) : fd_(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~RecoveryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  int fd_;
};

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

std::unique_ptr<Store> Store::open(const std::string& path) {
  std::unique_ptr<Store> s(new Store(path));
  try {
    s->connect();
    return s;
  } catch (const SqliteError& e) {
    if (e.corrupt() && s->recover(e.what())) return s;
    if (!e.corrupt()) {
      FUSOR_LOG(Warn) << "cache " << path << ": " << e.what() << "; running without the cache";
    }
  } catch (const std::exception& e) {
    FUSOR_LOG(Warn) << "cache " << path << ": " << e.what() << "; running without the cache";
  }
  return nullptr;
}

Store::~Store() { close(); }

void Store::close() {
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
}

void Store::connect() {
  close();
  fs::path p(path_);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  int rc = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
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
  // page_size only takes effect on a new, empty file (before WAL): large pages suit the
  // megabyte-sized payloads.
  exec(db_, "PRAGMA page_size=16384");
  exec(db_, "PRAGMA journal_mode=WAL");
  exec(db_, "PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=67108864; PRAGMA mmap_size=268435456");

  // Verify: our schema and format, or an empty file to create them in. Anything else (another
  // program's database, a future format) is set aside like a damaged file.
  int64_t ours = 0, tables = 0;
  {
    Stmt q(db_, "SELECT COUNT(*), COALESCE(SUM(name IN ('meta','entries','payloads')),0) FROM sqlite_master WHERE type='table'");
    q.step();
    tables = q.int_at(0);
    ours = q.int_at(1);
  }
  if (tables == 0) {
    Transaction t(db_);
    exec(db_,
         "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
         "CREATE TABLE IF NOT EXISTS entries(key TEXT PRIMARY KEY, model TEXT NOT NULL, providers TEXT NOT NULL,"
         " level TEXT NOT NULL, created_ms INTEGER NOT NULL, last_used_ms INTEGER NOT NULL,"
         " hits INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL, checksum TEXT NOT NULL, info TEXT NOT NULL);"
         "CREATE TABLE IF NOT EXISTS payloads(key TEXT PRIMARY KEY, payload BLOB NOT NULL);"
         "CREATE INDEX IF NOT EXISTS entries_lru ON entries(last_used_ms);");
    Stmt(db_, "INSERT OR IGNORE INTO meta(key, value) VALUES('format', ?)").bind(1, std::string_view(kFormat)).run();
    t.commit();
  } else if (ours != 3 || tables != 3) {
    throw SqliteError(SQLITE_NOTADB, "not a fusor cache (unexpected tables)");
  }
  Stmt f(db_, "SELECT value FROM meta WHERE key='format'");
  if (!f.step() || f.text_at(0) != kFormat)
    throw SqliteError(SQLITE_NOTADB, "not a fusor cache of format " + std::string(kFormat));
}

bool Store::recover(const std::string& why) {
  close();
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
        FUSOR_LOG(Warn) << "cache " << path_ << ": " << why << "; cannot move it aside (" << ec.message()
                        << "); running without the cache";
        return false;
      }
      for (const char* side : {"-wal", "-shm"})
        if (fs::exists(path_ + side)) fs::rename(path_ + side, aside + side, ec);
    }
  }
  if (!aside.empty())
    FUSOR_LOG(Warn) << "cache " << path_ << ": " << why << "; moved it aside to " << aside << " and started a new cache";
  else
    FUSOR_LOG(Warn) << "cache " << path_ << ": " << why << "; another process already replaced it";
  try {
    connect();
    return true;
  } catch (const std::exception& e) {
    FUSOR_LOG(Warn) << "cache " << path_ << ": cannot start a new cache: " << e.what() << "; running without the cache";
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
      FUSOR_LOG(Warn) << "cache " << path_ << ": " << what << ": " << e.what() << " (the cache is skipped)";
      return fallback;
    }
    if (!recover(e.what())) return fallback;
  }
  try {
    return op();
  } catch (const SqliteError& e) {
    FUSOR_LOG(Warn) << "cache " << path_ << ": " << what << ": " << e.what() << " (the cache is skipped)";
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
      FUSOR_LOG(Warn) << "cache " << path_ << ": entry " << key.substr(0, 16)
                      << " failed its checksum; dropped it (it is rebuilt)";
      Transaction t(db_);
      delete_entry(db_, key);
      t.commit();
      return std::nullopt;
    }
    if (now_ms() - last_used >= recency_ms_) {
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
                int64_t max_bytes) {
  int64_t size = static_cast<int64_t>(info.size() + payload.size());
  if (size > max_bytes) {
    FUSOR_LOG(Info) << "cache: entry of " << size << " bytes exceeds the bound of " << max_bytes << "; not stored";
    return false;
  }
  std::string sum = checksum_of(info, payload);
  return guarded("write", false, [&] {
    Transaction t(db_);
    int64_t now = now_ms();
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
    evict_lru(db_, max_bytes, key);
    t.commit();
    return true;
  });
}

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

VerifyReport Store::verify(bool drop) {
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
      if (checksum_of(q.text_at(1), q.blob_at(2)) != q.text_at(3)) r.bad_keys.push_back(q.text_at(0));
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
    recover(e.what());
    return rep;
  }
  if (drop && !rep.bad_keys.empty()) {
    guarded("verify", 0, [&] {
      Transaction t(db_);
      for (const std::string& k : rep.bad_keys) delete_entry(db_, k);
      t.commit();
      return 0;
    });
    for (const std::string& k : rep.bad_keys)
      FUSOR_LOG(Warn) << "cache " << path_ << ": entry " << k.substr(0, 16) << " failed its checksum; dropped it";
  }
  return rep;
}

int64_t Store::clear() {
  int64_t n = guarded("clear", int64_t{-1}, [&] {
    Transaction t(db_);
    Stmt q(db_, "SELECT COUNT(*) FROM entries");
    q.step();
    int64_t count = q.int_at(0);
    exec(db_, "DELETE FROM entries; DELETE FROM payloads");
    t.commit();
    return count;
  });
  // Give the space back; skipped quietly when another process holds the file.
  if (db_ && n >= 0) sqlite3_exec(db_, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  return n;
}

}  // namespace fusor::cache
