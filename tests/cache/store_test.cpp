// cache::Store: round trip, corruption handling, eviction and a write killed mid-transaction.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <map>

#include "cache/store.h"
#include "tests/cache/cache_test_util.h"

namespace fusor::cachetest {
namespace {

using cache::Store;

cache::EntryMeta meta(const std::string& model) { return {model, "cpu", "basic"}; }

TEST(CacheStore, PutThenGetReturnsTheBytes) {
  Dir d;
  auto s = Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->get("k1"));
  std::string payload(100000, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 31 + 7);
  ASSERT_TRUE(s->put("k1", meta("m.onnx"), "{\"a\":1}", payload, int64_t{1} << 30));
  auto f = s->get("k1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->info, "{\"a\":1}");
  EXPECT_EQ(f->payload, payload);
  // A second connection (another process would do the same) sees the committed entry.
  auto s2 = Store::open(d.path("c.db"));
  ASSERT_TRUE(s2);
  ASSERT_TRUE(s2->get("k1"));
  std::vector<cache::EntryRow> rows = s2->list();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].meta.model, "m.onnx");
  EXPECT_EQ(rows[0].size, static_cast<int64_t>(payload.size() + 7));
}

TEST(CacheStore, OpensInWalMode) {
  Dir d;
  { ASSERT_TRUE(Store::open(d.path("c.db"))); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(d.path("c.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Every file in the directory with its bytes: what must stay exactly as it was.
std::map<std::string, std::string> snapshot(const Dir& d) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(d.dir()))
    m[e.path().filename().string()] = e.is_regular_file() ? read_bytes(e.path().string()) : std::string("<dir>");
  return m;
}

using Status = cache::OpenResult::Status;

TEST(CacheStore, NotACacheIsRefusedUntouchedByEveryAccess) {
  Dir d;
  std::string garbage(5000, 'x');
  write_bytes(d.path("garbage"), garbage);
  write_bytes(d.path("empty"), "");
  raw_sql(d.path("foreign.db"), "CREATE TABLE people(name TEXT); INSERT INTO people VALUES('ada');");
  // An SQLite file of another program that marks itself (application_id), even with our tables.
  raw_sql(d.path("marked.db"), "PRAGMA application_id=1234; CREATE TABLE meta(key TEXT, value TEXT);"
                               "INSERT INTO meta VALUES('format','fusor-cache-1')");
  fs::create_directory(d.path("folder"));
  ASSERT_EQ(mkfifo(d.path("fifo").c_str(), 0644), 0);
  const std::map<std::string, std::string> before = snapshot(d);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage", "not an SQLite database"}, {"empty", "an empty file"},
      {"foreign.db", "without fusor's tables"}, {"marked.db", "another program"},
      {"folder", "a directory"},               {"fifo", "a FIFO"}};
  for (const auto& [name, what] : cases) {
    for (cache::Access a : {cache::Access::ReadOnly, cache::Access::ReadWrite}) {
      cache::OpenResult r = Store::open(d.path(name), a, /*create=*/true);
      EXPECT_EQ(r.status, Status::NotACache) << name;
      EXPECT_FALSE(r.store) << name;
      EXPECT_NE(r.message.find(what), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("nothing was changed"), std::string::npos) << r.message;
    }
    testing::internal::CaptureStderr();
    EXPECT_FALSE(Store::open(d.path(name)));  // a run: a warning, and no cache
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("running without the cache"), std::string::npos) << err;
  }
  EXPECT_EQ(snapshot(d), before);  // nothing moved, created or written
}

TEST(CacheStore, ReadOnlyAccessCreatesNothingForAMissingPath) {
  Dir d;
  cache::OpenResult r = Store::open(d.path("sub/c.db"), cache::Access::ReadOnly, true);
  EXPECT_EQ(r.status, Status::Missing);
  cache::OpenResult w = Store::open(d.path("c.db"), cache::Access::ReadWrite, /*create=*/false);
  EXPECT_EQ(w.status, Status::Missing);
  EXPECT_TRUE(snapshot(d).empty());
}

TEST(CacheStore, ReadOnlyAccessWritesNothing) {
  Dir d;
  {
    auto s = Store::open(d.path("c.db"));
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->put("k", meta("m"), "{}", "payload", 1 << 20));
    ASSERT_TRUE(s->put("bad", meta("m"), "{}", "payload", 1 << 20));
  }
  raw_sql(d.path("c.db"), "UPDATE payloads SET payload = CAST('payloaX' AS BLOB) WHERE key='bad'");
  const std::map<std::string, std::string> before = snapshot(d);
  ASSERT_EQ(before.size(), 1u);  // the last connection removed -wal and -shm
  {
    cache::OpenResult r = Store::open(d.path("c.db"), cache::Access::ReadOnly, false);
    ASSERT_EQ(r.status, Status::Opened) << r.message;
    r.store->set_recency_granularity_ms(0);  // would record every hit
    testing::internal::CaptureStderr();
    EXPECT_TRUE(r.store->get("k"));
    EXPECT_FALSE(r.store->get("bad"));  // reported, not dropped
    EXPECT_FALSE(r.store->put("new", meta("n"), "{}", "p", 1 << 20));
    EXPECT_EQ(r.store->clear(), -1);
    cache::VerifyReport v = r.store->verify(/*repair=*/true);  // repair needs read-write access
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(v.bad_keys.size(), 1u);
    EXPECT_EQ(r.store->list().size(), 2u);
    EXPECT_EQ(r.store->list()[0].hits, 0);
  }
  EXPECT_EQ(snapshot(d), before);
}

TEST(CacheStore, NewStoreIsMarkedAndLeavesNoSideFiles) {
  Dir d;
  { ASSERT_TRUE(Store::open(d.path("c.db"))); }
  std::map<std::string, std::string> files = snapshot(d);
  ASSERT_EQ(files.size(), 1u) << "no temporary, lock or journal file left";
  std::string bytes = files["c.db"];
  ASSERT_GE(bytes.size(), 100u);
  EXPECT_EQ(bytes.substr(68, 4), "FUSR");  // PRAGMA application_id, big-endian
}

TEST(CacheStore, ACacheMadeBeforeTheApplicationIdIsRecognizedAndMarkedOnWrite) {
  Dir d;
  raw_sql(d.path("c.db"),
          "PRAGMA journal_mode=WAL;"
          "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
          "CREATE TABLE entries(key TEXT PRIMARY KEY, model TEXT NOT NULL, providers TEXT NOT NULL,"
          " level TEXT NOT NULL, created_ms INTEGER NOT NULL, last_used_ms INTEGER NOT NULL,"
          " hits INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL, checksum TEXT NOT NULL, info TEXT NOT NULL);"
          "CREATE TABLE payloads(key TEXT PRIMARY KEY, payload BLOB NOT NULL);"
          "INSERT INTO meta VALUES('format','fusor-cache-1');");
  const std::string before = read_bytes(d.path("c.db"));
  {
    cache::OpenResult r = Store::open(d.path("c.db"), cache::Access::ReadOnly, false);
    ASSERT_EQ(r.status, Status::Opened) << r.message;
  }
  EXPECT_EQ(read_bytes(d.path("c.db")), before);
  {
    auto s = Store::open(d.path("c.db"));
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->put("k", meta("m"), "{}", "p", 1 << 20));
  }
  EXPECT_EQ(read_bytes(d.path("c.db")).substr(68, 4), "FUSR");
}

TEST(CacheStore, DamagedPagesFoundLaterAreMovedAsideToo) {
  Dir d;
  {
    auto s = Store::open(d.path("c.db"));
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->put("k", meta("m"), "{}", std::string(200000, 'p'), 1 << 30));
  }
  // Overwrite everything after the header page: the schema is gone, the header still says SQLite.
  std::string bytes = read_bytes(d.path("c.db"));
  ASSERT_GT(bytes.size(), 40000u);
  for (size_t i = 100; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);
  write_bytes(d.path("c.db"), bytes);
  testing::internal::CaptureStderr();
  auto s = Store::open(d.path("c.db"));
  std::optional<cache::Fetched> f;
  if (s) f = s->get("k");
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s) << err;
  EXPECT_FALSE(f);
  EXPECT_NE(err.find("moved it aside"), std::string::npos) << err;
  EXPECT_EQ(d.files_starting("c.db.corrupt-").size(), 1u);
  EXPECT_TRUE(s->put("k", meta("m"), "{}", "new", 1 << 20));
}

TEST(CacheStore, ADamagedCacheIsReportedNotMovedByReadOnlyAccess) {
  Dir d;
  {
    auto s = Store::open(d.path("c.db"));
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->put("k", meta("m"), "{}", std::string(200000, 'p'), 1 << 30));
  }
  std::string bytes = read_bytes(d.path("c.db"));
  for (size_t i = 100; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);
  write_bytes(d.path("c.db"), bytes);
  cache::OpenResult r = Store::open(d.path("c.db"), cache::Access::ReadOnly, false);
  EXPECT_EQ(r.status, Status::Damaged);
  EXPECT_NE(r.message.find("nothing was changed"), std::string::npos) << r.message;
  EXPECT_EQ(read_bytes(d.path("c.db")), bytes);
  EXPECT_EQ(snapshot(d).size(), 1u);
}

TEST(CacheStore, EntryFailingItsChecksumIsDroppedWithAWarning) {
  Dir d;
  auto s = Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->put("good", meta("a"), "{}", "payload-a", 1 << 20));
  ASSERT_TRUE(s->put("bad", meta("b"), "{}", "payload-b", 1 << 20));
  raw_sql(d.path("c.db"), "UPDATE payloads SET payload = CAST('payload-B' AS BLOB) WHERE key='bad'");
  testing::internal::CaptureStderr();
  auto f = s->get("bad");
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(f);
  EXPECT_NE(err.find("failed its checksum"), std::string::npos) << err;
  EXPECT_EQ(s->list().size(), 1u);  // dropped
  EXPECT_TRUE(s->get("good"));
  // verify finds nothing left to drop.
  cache::VerifyReport v = s->verify(true);
  EXPECT_TRUE(v.integrity_ok);
  EXPECT_EQ(v.entries, 1);
  EXPECT_TRUE(v.bad_keys.empty());
}

TEST(CacheStore, VerifyDropsEntriesFailingTheirChecksum) {
  Dir d;
  auto s = Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->put("k1", meta("a"), "{}", "one", 1 << 20));
  ASSERT_TRUE(s->put("k2", meta("b"), "{}", "two", 1 << 20));
  raw_sql(d.path("c.db"), "UPDATE entries SET info = '{\"x\":1}' WHERE key='k2'");
  testing::internal::CaptureStderr();
  cache::VerifyReport v = s->verify(true);
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(v.integrity_ok);
  EXPECT_EQ(v.entries, 2);
  ASSERT_EQ(v.bad_keys.size(), 1u);
  EXPECT_EQ(v.bad_keys[0], "k2");
  EXPECT_EQ(s->list().size(), 1u);
}

TEST(CacheStore, EvictionKeepsTheBoundAndDropsTheLeastRecentlyUsed) {
  Dir d;
  auto s = Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  s->set_recency_granularity_ms(0);  // record every hit
  const std::string p(100000, 'z');
  const int64_t bound = 250000;  // room for two entries
  ASSERT_TRUE(s->put("a", meta("a"), "{}", p, bound));
  usleep(3000);
  ASSERT_TRUE(s->put("b", meta("b"), "{}", p, bound));
  usleep(3000);
  ASSERT_TRUE(s->get("a"));  // a is now more recent than b
  usleep(3000);
  ASSERT_TRUE(s->put("c", meta("c"), "{}", p, bound));
  EXPECT_TRUE(s->get("a"));
  EXPECT_FALSE(s->get("b"));
  EXPECT_TRUE(s->get("c"));
  cache::StoreStats st = s->stats();
  EXPECT_EQ(st.entries, 2);
  EXPECT_LE(st.bytes, bound);
  // An entry larger than the bound is not stored and evicts nothing.
  EXPECT_FALSE(s->put("huge", meta("h"), "{}", std::string(300000, 'h'), bound));
  EXPECT_EQ(s->stats().entries, 2);
}

TEST(CacheStore, HitsAreRecordedAtMostOncePerGranule) {
  Dir d;
  auto s = Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->put("k", meta("m"), "{}", "p", 1 << 20));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(s->get("k"));
  EXPECT_EQ(s->list()[0].hits, 0);  // within a minute of its last use: read-only hits
  s->set_recency_granularity_ms(0);
  ASSERT_TRUE(s->get("k"));
  ASSERT_TRUE(s->get("k"));
  EXPECT_EQ(s->list()[0].hits, 2);
}

// Remembered model files: exact stamps only, their external-data locations kept, none after
// clear, none written by read-only access.
TEST(CacheStore, RemembersAFileForItsExactStamp) {
  Dir d;
  auto s = Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  cache::FileStamp st{.dev = 5, .ino = 77, .size = 1000, .mtime_ns = 111, .ctime_ns = 222};
  const cache::RememberedFile f{std::string(32, 'a'), {}};
  EXPECT_FALSE(s->remembered_file(st));
  s->remember_file(st, f);
  EXPECT_EQ(s->remembered_file(st), f);
  for (auto change : {&cache::FileStamp::size, &cache::FileStamp::mtime_ns, &cache::FileStamp::ctime_ns,
                      &cache::FileStamp::ino}) {
    cache::FileStamp other = st;
    other.*change += 1;
    EXPECT_FALSE(s->remembered_file(other));
  }
  const cache::RememberedFile f2{std::string(32, 'b'), {"", "w 1.bin", "weights/w2.bin"}};
  cache::FileStamp rewritten = st;
  rewritten.ctime_ns = 333;
  s->remember_file(rewritten, f2);  // the same file, changed: replaces the row
  EXPECT_FALSE(s->remembered_file(st));
  EXPECT_EQ(s->remembered_file(rewritten), f2);
  cache::FileStamp odd = st;
  odd.ino = 78;
  s->remember_file(odd, {std::string(32, 'c'), {"a\nb"}});  // a location a row cannot hold
  s->remember_file(odd, {std::string(31, 'c'), {}});        // not a hash
  EXPECT_FALSE(s->remembered_file(odd));
  auto ro = Store::open(d.path("c.db"), cache::Access::ReadOnly, false);
  ASSERT_TRUE(ro.store);
  EXPECT_EQ(ro.store->remembered_file(rewritten), f2);
  ro.store->remember_file(st, f);
  EXPECT_FALSE(ro.store->remembered_file(st));
  ro.store.reset();
  EXPECT_EQ(s->clear(), 0);
  EXPECT_FALSE(s->remembered_file(rewritten));
}

TEST(CacheStore, ClearRemovesEverything) {
  Dir d;
  auto s = Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->put("k1", meta("a"), "{}", "one", 1 << 20));
  ASSERT_TRUE(s->put("k2", meta("b"), "{}", "two", 1 << 20));
  EXPECT_EQ(s->clear(), 2);
  EXPECT_EQ(s->stats().entries, 0);
  EXPECT_FALSE(s->get("k1"));
}

TEST(CacheStore, KilledInsideTheWriteTransactionLeavesTheCacheConsistent) {
  Dir d;
  {
    auto s = Store::open(d.path("c.db"));
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->put("before", meta("a"), "{}", std::string(50000, 'a'), 1 << 30));
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("FUSOR_CACHE_TEST_KILL", "put", 1);
    auto s = Store::open(d.path("c.db"));
    if (s) s->put("during", meta("b"), "{}", std::string(500000, 'b'), 1 << 30);
    _exit(0);  // not reached when the hook fires
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  testing::internal::CaptureStderr();
  auto s = Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  cache::VerifyReport v = s->verify(false);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(v.integrity_ok) << v.integrity;
  EXPECT_TRUE(v.bad_keys.empty());
  EXPECT_EQ(v.entries, 1);
  EXPECT_TRUE(s->get("before"));
  EXPECT_FALSE(s->get("during"));
  EXPECT_TRUE(d.files_starting("c.db.corrupt-").empty()) << err;
  // And the store takes writes again.
  EXPECT_TRUE(s->put("after", meta("c"), "{}", "c", 1 << 30));
}

TEST(CacheStore, UnwritableLocationIsAWarningNotAFailure) {
  testing::internal::CaptureStderr();
  auto s = Store::open("/proc/fusor-no-such-dir/c.db");
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(s);
  EXPECT_NE(err.find("running without the cache"), std::string::npos) << err;
}

TEST(CacheStore, DefaultPathFollowsXdgCacheHome) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(cache::default_cache_path(), "/tmp/xdg-test/fusor/cache.db");
  unsetenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (home) {
    EXPECT_EQ(cache::default_cache_path(), std::string(home) + "/.cache/fusor/cache.db");
  }
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

TEST(CacheStore, SizeBoundComesFromTheEnvironment) {
  setenv("FUSOR_CACHE_MAX_MB", "3", 1);
  EXPECT_EQ(cache::default_max_bytes(), 3 << 20);
  unsetenv("FUSOR_CACHE_MAX_MB");
  EXPECT_EQ(cache::default_max_bytes(), int64_t{1024} << 20);
}

}  // namespace
}  // namespace fusor::cachetest
