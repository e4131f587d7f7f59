// The cache through the fusor binary: reports, identical results on a hit, damaged files, a
// process killed mid-write, eviction, and `fusor cache`.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tests/cache/cache_test_util.h"
#include "tests/cli/cli_harness.h"

namespace fusor::cachetest {
namespace {

using clitest::run_fusor;
using clitest::run_fusor_env;
using clitest::RunResult;

std::string squeezenet() { return std::string(FUSOR_SOURCE_DIR) + "/examples/models/squeezenet1_1.onnx"; }

RunResult optimize(const std::string& model, const std::string& out, const std::string& db,
                   std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"optimize", model, "-o", out, "--cache", db, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_fusor(args);
}

TEST(CacheCli, OptimizeHitAfterMissSavesIdenticalBytes) {
  Dir d;
  RunResult a = optimize(squeezenet(), d.path("a.onnx"), d.path("c.db"), {"--level", "extended"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  RunResult b = optimize(squeezenet(), d.path("b.onnx"), d.path("c.db"), {"--level", "extended"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  json::Value ja = a.json(), jb = b.json();
  EXPECT_EQ(ja["cache"].as_string(), "miss");
  EXPECT_EQ(jb["cache"].as_string(), "hit");
  EXPECT_EQ(jb["rules_fired"].dump(), ja["rules_fired"].dump());
  EXPECT_EQ(jb["nodes_before"].as_int(), ja["nodes_before"].as_int());
  EXPECT_EQ(jb["nodes_after"].as_int(), ja["nodes_after"].as_int());
  EXPECT_EQ(jb["ops_before"].dump(), ja["ops_before"].dump());
  EXPECT_EQ(jb["ops_after"].dump(), ja["ops_after"].dump());
  std::string bytes_a = read_bytes(d.path("a.onnx"));
  EXPECT_FALSE(bytes_a.empty());
  EXPECT_EQ(read_bytes(d.path("b.onnx")), bytes_a);
}

TEST(CacheCli, RunHitAfterMissWritesIdenticalOutputs) {
  Dir d;
  for (const char* dir : {"miss", "hit"}) {
    RunResult r = run_fusor({"run", squeezenet(), "--cache", d.path("c.db"), "--output-dir", d.path(dir), "--seed", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(std::string("cache ") + dir), std::string::npos) << r.out;
  }
  std::string miss = read_bytes(d.path("miss/output_0.pb"));
  EXPECT_FALSE(miss.empty());
  EXPECT_EQ(read_bytes(d.path("hit/output_0.pb")), miss);
}

TEST(CacheCli, BenchReportsTheCacheAndNoCacheIsOff) {
  Dir d;
  std::vector<std::string> base = {"bench", squeezenet(), "--runs", "1", "--warmup", "0", "--json", "--cache", d.path("c.db")};
  RunResult miss = run_fusor(base);
  ASSERT_EQ(miss.exit_code, 0) << miss.err;
  EXPECT_EQ(miss.json()["cache"].as_string(), "miss");
  RunResult hit = run_fusor(base);
  ASSERT_EQ(hit.exit_code, 0) << hit.err;
  EXPECT_EQ(hit.json()["cache"].as_string(), "hit");
  std::vector<std::string> off = base;
  off.push_back("--no-cache");
  RunResult o = run_fusor(off);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.json()["cache"].as_string(), "off");
}

TEST(CacheCli, DefaultLocationIsUnderXdgCacheHome) {
  Dir d;
  RunResult r = run_fusor_env({"optimize", squeezenet(), "-o", d.path("o.onnx"), "--level", "basic", "--json"},
                              {std::string("XDG_CACHE_HOME=").append(d.dir())});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["cache"].as_string(), "miss");
  EXPECT_TRUE(std::filesystem::exists(d.path("fusor/cache.db")));
  RunResult again = run_fusor_env({"optimize", squeezenet(), "-o", d.path("o.onnx"), "--level", "basic", "--json"},
                                  {std::string("XDG_CACHE_HOME=").append(d.dir())});
  EXPECT_EQ(again.json()["cache"].as_string(), "hit");
}

TEST(CacheCli, TraceRunsWithTheCacheOff) {
  Dir d;
  RunResult r = optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic", "--trace"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["cache"].as_string(), "off");
}

// Every file in the directory with its bytes.
std::map<std::string, std::string> snapshot(const Dir& d) {
  std::map<std::string, std::string> m;
  for (const auto& e : std::filesystem::directory_iterator(d.dir()))
    m[e.path().filename().string()] = e.is_regular_file() ? read_bytes(e.path().string()) : std::string("<dir>");
  return m;
}

// A cache made by fusor whose pages after the header are overwritten.
void damage(const std::string& db) {
  std::string bytes = read_bytes(db);
  for (size_t i = 100; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);
  write_bytes(db, bytes);
}

TEST(CacheCli, CorruptDatabaseIsMovedAsideWithAWarningAndTheRunSucceeds) {
  Dir d;
  ASSERT_EQ(optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic"}).exit_code, 0);
  damage(d.path("c.db"));
  std::string damaged = read_bytes(d.path("c.db"));
  RunResult r = optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warn"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("moved it aside"), std::string::npos) << r.err;
  EXPECT_EQ(r.json()["cache"].as_string(), "miss");
  std::vector<std::string> aside = d.files_starting("c.db.corrupt-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(read_bytes(aside[0]), damaged);
  RunResult again = optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic"});
  EXPECT_EQ(again.json()["cache"].as_string(), "hit");
  EXPECT_EQ(again.err.find("warn"), std::string::npos) << again.err;
}

// Issue 18: `--cache model.onnx` moved the user's model aside. Nothing that is not a fusor cache is
// created, moved or written by any cache command or by a run.
TEST(CacheCli, AFileThatIsNotACacheIsRefusedUntouchedByEveryCommand) {
  Dir d;
  std::string model = d.path("model.onnx");
  std::filesystem::copy_file(squeezenet(), model);
  std::filesystem::create_directory(d.path("folder"));
  write_bytes(d.path("empty"), "");
  const std::map<std::string, std::string> before = snapshot(d);
  for (const std::string& target : {model, d.path("folder"), d.path("empty")}) {
    for (const char* action : {"list", "stats", "verify", "clear"}) {
      for (bool json : {false, true}) {
        std::vector<std::string> args = {"cache", action, "--cache", target};
        if (json) args.push_back("--json");
        RunResult r = run_fusor(args);
        EXPECT_EQ(r.exit_code, 2) << action << " " << target << ": " << r.out << r.err;
        EXPECT_NE(r.err.find("not a fusor cache"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(target), std::string::npos) << r.err;
      }
    }
    RunResult repair = run_fusor({"cache", "verify", "--repair", "--cache", target});
    EXPECT_EQ(repair.exit_code, 2) << repair.err;
  }
  // A run given the model as its cache: a warning, the run succeeds, the model is untouched.
  Dir out;
  RunResult r = optimize(squeezenet(), out.path("o.onnx"), model, {"--level", "basic"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("not a fusor cache"), std::string::npos) << r.err;
  EXPECT_EQ(r.json()["cache"].as_string(), "off");
  EXPECT_EQ(snapshot(d), before);
}

TEST(CacheCli, ReadOnlyCommandsCreateNothing) {
  Dir d;
  for (const char* action : {"list", "stats", "verify", "clear"}) {
    RunResult r = run_fusor({"cache", action, "--cache", d.path("sub/new.db"), "--json"});
    ASSERT_EQ(r.exit_code, 0) << action << ": " << r.err;
    EXPECT_FALSE(r.json()["exists"].as_bool()) << action;
    RunResult t = run_fusor({"cache", action, "--cache", d.path("new.db")});
    ASSERT_EQ(t.exit_code, 0) << action << ": " << t.err;
    EXPECT_NE(t.out.find("no cache"), std::string::npos) << t.out;
  }
  // The default location too.
  RunResult r = run_fusor_env({"cache", "stats"}, {std::string("XDG_CACHE_HOME=").append(d.dir())});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(snapshot(d).empty());
}

TEST(CacheCli, ADamagedCacheIsReportedByReadersAndMovedAsideOnlyByWriters) {
  Dir d;
  ASSERT_EQ(optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic"}).exit_code, 0);
  damage(d.path("c.db"));
  const std::map<std::string, std::string> before = snapshot(d);
  for (const char* action : {"list", "stats", "verify"}) {
    RunResult r = run_fusor({"cache", action, "--cache", d.path("c.db")});
    EXPECT_EQ(r.exit_code, 2) << action << ": " << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("damaged"), std::string::npos) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("nothing was changed"), std::string::npos) << r.out << r.err;
  }
  EXPECT_EQ(snapshot(d), before);
  RunResult v = run_fusor({"cache", "verify", "--repair", "--cache", d.path("c.db"), "--json"});
  EXPECT_EQ(v.exit_code, 2) << v.err;
  EXPECT_TRUE(v.json()["repaired"].as_bool());
  EXPECT_EQ(d.files_starting("c.db.corrupt-").size(), 1u);
  RunResult after = run_fusor({"cache", "verify", "--cache", d.path("c.db"), "--json"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_TRUE(after.json()["ok"].as_bool());
}

TEST(CacheCli, CorruptEntryIsDroppedAndRebuilt) {
  Dir d;
  ASSERT_EQ(optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic"}).exit_code, 0);
  raw_sql(d.path("c.db"), "UPDATE entries SET info = replace(info, 'nodes_before', 'nodes_beforf')");
  RunResult r = optimize(squeezenet(), d.path("o2.onnx"), d.path("c.db"), {"--level", "basic"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("failed its checksum"), std::string::npos) << r.err;
  EXPECT_EQ(r.json()["cache"].as_string(), "miss");
  RunResult again = optimize(squeezenet(), d.path("o3.onnx"), d.path("c.db"), {"--level", "basic"});
  EXPECT_EQ(again.json()["cache"].as_string(), "hit");
  EXPECT_EQ(read_bytes(d.path("o3.onnx")), read_bytes(d.path("o2.onnx")));
}

TEST(CacheCli, KilledMidWriteLeavesAConsistentCache) {
  Dir d;
  ASSERT_EQ(optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "disabled"}).exit_code, 0);
  RunResult killed = run_fusor_env({"optimize", squeezenet(), "-o", d.path("k.onnx"), "--cache", d.path("c.db"),
                                    "--level", "basic"},
                                   {"FUSOR_CACHE_TEST_KILL=put"});
  EXPECT_EQ(killed.exit_code, 128 + 9) << killed.err;  // SIGKILL inside the write transaction
  RunResult v = run_fusor({"cache", "verify", "--cache", d.path("c.db"), "--json"});
  ASSERT_EQ(v.exit_code, 0) << v.out << v.err;
  json::Value jv = v.json();
  EXPECT_TRUE(jv["ok"].as_bool());
  EXPECT_EQ(jv["integrity"].as_string(), "ok");
  EXPECT_EQ(jv["entries"].as_int(), 1);  // the earlier entry, not the killed one
  EXPECT_TRUE(d.files_starting("c.db.corrupt-").empty());
  RunResult miss = optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic"});
  EXPECT_EQ(miss.json()["cache"].as_string(), "miss");
  RunResult hit = optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic"});
  EXPECT_EQ(hit.json()["cache"].as_string(), "hit");
}

// kill -9 while the session image is being written, and between its rename and its entry's
// commit: no half image is ever used, the next run rebuilds, nothing else is lost.
TEST(CacheCli, KilledWhileWritingAnImageNeverLeavesAHalfImageInUse) {
  for (const char* point : {"image-write", "image-publish"}) {
    SCOPED_TRACE(point);
    Dir d;
    const std::string db = d.path("c.db");
    std::vector<std::string> run_args = {"run", squeezenet(), "--cache", db, "--seed", "3"};
    ASSERT_EQ(optimize(squeezenet(), d.path("o.onnx"), db, {"--level", "disabled"}).exit_code, 0);
    std::vector<std::string> out1 = run_args;
    out1.insert(out1.end(), {"--output-dir", d.path("plain")});
    RunResult killed = run_fusor_env(out1, {std::string("FUSOR_CACHE_TEST_KILL=") + point});
    EXPECT_EQ(killed.exit_code, 128 + 9) << killed.err;
    RunResult v = run_fusor({"cache", "verify", "--cache", db, "--json"});
    ASSERT_EQ(v.exit_code, 0) << v.out << v.err;
    EXPECT_EQ(v.json()["entries"].as_int(), 1);  // the earlier entry only
    std::vector<std::string> out2 = run_args;
    out2.insert(out2.end(), {"--output-dir", d.path("miss")});
    RunResult miss = run_fusor(out2);
    ASSERT_EQ(miss.exit_code, 0) << miss.err;
    EXPECT_NE(miss.out.find("cache miss"), std::string::npos) << miss.out;
    EXPECT_EQ(miss.err.find("cache"), std::string::npos) << miss.err;  // no cache warning
    std::vector<std::string> out3 = run_args;
    out3.insert(out3.end(), {"--output-dir", d.path("hit")});
    RunResult hit = run_fusor(out3);
    ASSERT_EQ(hit.exit_code, 0) << hit.err;
    EXPECT_NE(hit.out.find("cache hit"), std::string::npos) << hit.out;
    EXPECT_EQ(read_bytes(d.path("hit/output_0.pb")), read_bytes(d.path("miss/output_0.pb")));
    // Every image in the folder is a published, referenced one (the killed writer's temporary or
    // orphan was never used; the orphan was swept at the next write).
    RunResult v2 = run_fusor({"cache", "verify", "--cache", db, "--json"});
    EXPECT_EQ(v2.json()["images"].as_int(), 2) << v2.out;
    int images = 0;
    for (const auto& e : fs::directory_iterator(db + ".images"))
      if (e.path().extension() == ".fimg") ++images;
    EXPECT_EQ(images, 2);
  }
}

TEST(CacheCli, BenchHitReportsTheInitBreakdown) {
  Dir d;
  std::vector<std::string> base = {"bench", squeezenet(), "--runs", "1", "--warmup", "0", "--json", "--cache", d.path("c.db")};
  RunResult miss = run_fusor(base);
  ASSERT_EQ(miss.exit_code, 0) << miss.err;
  EXPECT_FALSE(miss.json()["init_breakdown"]["restored"].as_bool());
  EXPECT_GT(miss.json()["init_breakdown"]["store_ms"].as_double(), 0.0);
  RunResult hit = run_fusor(base);
  ASSERT_EQ(hit.exit_code, 0) << hit.err;
  json::Value j = hit.json();
  EXPECT_EQ(j["cache"].as_string(), "hit");
  const json::Value& b = j["init_breakdown"];
  EXPECT_TRUE(b["restored"].as_bool());
  EXPECT_GT(b["prepacked_mapped"].as_int(), 0);
  EXPECT_EQ(b["store_ms"].as_double(), 0.0);
  for (const char* k : {"key_ms", "open_ms", "map_ms", "plan_ms"}) EXPECT_GE(b[k].as_double(), 0.0) << k;
  std::string doc = read_bytes(std::string(FUSOR_SOURCE_DIR) + "/docs/cli.md");
  for (const auto& [key, value] : b.as_object())
    EXPECT_NE(doc.find("`" + key + "`"), std::string::npos) << "init_breakdown key '" << key << "' is not in docs/cli.md";
}

TEST(CacheCli, EvictionHonoursTheBound) {
  Dir d;
  // Three models of ~420 kB each (two 52,500-float initializers) under a 1 MB bound.
  for (int i = 0; i < 3; ++i) {
    std::string n = std::to_string(i);
    std::string m = d.path(std::string("m").append(n).append(".onnx"));
    save_model_proto(small_model(52500, std::string("model ").append(n)), m);
    RunResult r = run_fusor({"optimize", m, "-o", d.path("o.onnx"), "--cache", d.path("c.db"), "--level", "disabled",
                             "--cache-max-mb", "1", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.json()["cache"].as_string(), "miss");
  }
  RunResult list = run_fusor({"cache", "list", "--cache", d.path("c.db"), "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  json::Value jl = list.json();
  const auto& entries = jl["entries"].as_array();
  int64_t total = 0;
  for (const auto& e : entries) total += e["size"].as_int();
  EXPECT_EQ(entries.size(), 2u);
  EXPECT_LE(total, 1 << 20);
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries[0]["model"].as_string(), d.path("m2.onnx"));  // the newest stays
  for (const auto& e : entries) EXPECT_NE(e["model"].as_string(), d.path("m0.onnx"));  // the oldest went
  RunResult stats = run_fusor({"cache", "stats", "--cache", d.path("c.db"), "--cache-max-mb", "1", "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(stats.json()["entries"].as_int(), 2);
  EXPECT_EQ(stats.json()["max_bytes"].as_int(), 1 << 20);
}

TEST(CacheCli, CacheCommandsAndTheirDocumentedKeys) {
  Dir d;
  ASSERT_EQ(optimize(squeezenet(), d.path("o.onnx"), d.path("c.db"), {"--level", "basic"}).exit_code, 0);
  std::string doc = read_bytes(std::string(FUSOR_SOURCE_DIR) + "/docs/cli.md");
  auto documented = [&](const json::Value& v, const std::string& what) {
    for (const auto& [key, value] : v.as_object())
      EXPECT_NE(doc.find("`" + key + "`"), std::string::npos) << what << " key '" << key << "' is not in docs/cli.md";
  };
  for (const char* action : {"list", "stats", "verify", "clear"}) {
    RunResult r = run_fusor({"cache", action, "--cache", d.path("c.db"), "--json"});
    ASSERT_EQ(r.exit_code, 0) << action << ": " << r.err;
    json::Value v = r.json();
    documented(v, std::string("cache ") + action);
    if (std::string(action) == "list") {
      ASSERT_EQ(v["entries"].as_array().size(), 1u);
      documented(v["entries"][0], "cache list entry");
      EXPECT_EQ(v["entries"][0]["key"].as_string().size(), 32u);
    }
    if (std::string(action) == "clear") {
      EXPECT_EQ(v["removed"].as_int(), 1);
    }
  }
  RunResult text = run_fusor({"cache", "stats", "--cache", d.path("c.db")});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("entries    0"), std::string::npos) << text.out;
  RunResult bad = run_fusor({"cache", "frobnicate", "--cache", d.path("c.db")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("list, stats, verify, clear"), std::string::npos) << bad.err;
}

TEST(CacheCli, BenchKeysAreDocumented) {
  Dir d;
  RunResult r = run_fusor({"bench", squeezenet(), "--runs", "1", "--warmup", "0", "--json", "--cache", d.path("c.db")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string doc = read_bytes(std::string(FUSOR_SOURCE_DIR) + "/docs/cli.md");
  json::Value report = r.json();
  for (const auto& [key, value] : report.as_object())
    EXPECT_NE(doc.find("`" + key + "`"), std::string::npos) << "bench key '" << key << "' is not in docs/cli.md";
}

}  // namespace
}  // namespace fusor::cachetest
