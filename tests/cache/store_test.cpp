// cache::Store: round trip, corruption handling, eviction and a write killed mid-transaction.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

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

TEST(CacheStore, GarbageFileIsMovedAsideWithAWarning) {
  Dir d;
  std::string garbage(5000, 'x');
  write_bytes(d.path("c.db"), garbage);
  testing::internal::CaptureStderr();
  auto s = Store::open(d.path("c.db"));
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s) << err;
  EXPECT_NE(err.find("moved it aside"), std::string::npos) << err;
  std::vector<std::string> aside = d.files_starting("c.db.corrupt-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(read_bytes(aside[0]), garbage);  // nothing deleted
  // The fresh store works.
  ASSERT_TRUE(s->put("k", meta("m"), "{}", "payload", 1 << 20));
  EXPECT_TRUE(s->get("k"));
}

TEST(CacheStore, ForeignDatabaseIsMovedAside) {
  Dir d;
  raw_sql(d.path("c.db"), "CREATE TABLE people(name TEXT); INSERT INTO people VALUES('ada');");
  testing::internal::CaptureStderr();
  auto s = Store::open(d.path("c.db"));
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s);
  EXPECT_NE(err.find("not a fusor cache"), std::string::npos) << err;
  EXPECT_EQ(d.files_starting("c.db.corrupt-").size(), 1u);
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
