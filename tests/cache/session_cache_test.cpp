// load_optimized (engine/session/optimize_cached.h): a hit returns what the miss produced, and the
// key changes with every input that can change the optimized model.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "cache/file_stamp.h"
#include "cache/hash.h"
#include "cache/store.h"

#include "cache/key.h"
#include "engine/exec/executor.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/inputs.h"
#include "engine/session/optimize_cached.h"
#include "tests/cache/cache_test_util.h"

namespace fusor::cachetest {
namespace {

std::string squeezenet() { return std::string(FUSOR_SOURCE_DIR) + "/examples/models/squeezenet1_1.onnx"; }

std::vector<Tensor> run_once(const Model& m) {
  Executor ex(m);
  NamedTensors inputs;
  InputOptions opts;
  opts.seed = 7;
  std::vector<std::string> warnings;
  complete_inputs(*m.graph, inputs, opts, &warnings);
  return ex.run(inputs);
}

OptimizedModel load(const std::string& path, const std::string& db, OptimizeOptions o = {},
                    const ShapeOverrides& ov = {}) {
  CacheOptions c;
  c.path = db;
  return load_optimized(ModelSource::file(path), ov, o, c);
}

TEST(CacheSession, HitAfterMissGivesTheSameModelOutputsAndCounts) {
  Dir d;
  OptimizeOptions o;
  o.level = OptLevel::Extended;
  OptimizedModel miss = load(squeezenet(), d.path("c.db"), o);
  ASSERT_EQ(miss.cache, "miss");
  OptimizedModel hit = load(squeezenet(), d.path("c.db"), o);
  ASSERT_EQ(hit.cache, "hit");
  EXPECT_EQ(hit.report.rules_fired, miss.report.rules_fired);
  EXPECT_FALSE(miss.report.rules_fired.empty());
  EXPECT_EQ(hit.nodes_before, miss.nodes_before);
  EXPECT_EQ(hit.ops_before, miss.ops_before);
  EXPECT_EQ(hit.model->path, squeezenet());
  EXPECT_EQ(serialize_model(*hit.model), serialize_model(*miss.model));
  std::vector<Tensor> a = run_once(*miss.model), b = run_once(*hit.model);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].bit_equal(b[i])) << "output " << i;
  // Without the cache the result is the same as well.
  CacheOptions off;
  off.enabled = false;
  OptimizedModel plain = load_optimized(ModelSource::file(squeezenet()), {}, o, off);
  EXPECT_EQ(plain.cache, "off");
  EXPECT_EQ(serialize_model(*plain.model), serialize_model(*miss.model));
}

TEST(CacheSession, BytesSourceHitsTheEntryOfTheSameFile) {
  Dir d;
  OptimizeOptions o;
  o.level = OptLevel::Basic;
  ASSERT_EQ(load(squeezenet(), d.path("c.db"), o).cache, "miss");
  CacheOptions c;
  c.path = d.path("c.db");
  OptimizedModel hit = load_optimized(ModelSource::memory(read_bytes(squeezenet()), "sq"), {}, o, c);
  EXPECT_EQ(hit.cache, "hit");
  EXPECT_EQ(hit.model->path, "sq");
}

// `m` with its first initializer's 64 bytes stored in the external file "w.bin" beside the model.
onnx::ModelProto with_external_weight(onnx::ModelProto m) {
  auto* t = m.mutable_graph()->mutable_initializer(0);
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("w.bin");
  return m;
}

// What the store at `db` remembers of the file `model` as it is now (nullopt: nothing).
std::optional<cache::RememberedFile> remembered(const std::string& model, const std::string& db) {
  auto s = cache::Store::open(db);
  const int fd = ::open(model.c_str(), O_RDONLY);
  if (!s || fd < 0) return std::nullopt;
  std::optional<cache::FileStamp> st = cache::stamp_of_fd(fd);
  ::close(fd);
  return st ? s->remembered_file(*st) : std::nullopt;
}

// A hit may take the model file's hash from the store (cache/file_stamp.h) instead of reading the
// file; a file rewritten in place with the same size and its old modification time must still
// miss (its ctime moved).
TEST(CacheSession, ARememberedModelHashServesOnlyTheUnchangedFile) {
  Dir d;
  const std::string model = d.path("m.onnx");
  save_model_proto(small_model(16, "version-a"), model);
  struct stat before {};
  ASSERT_EQ(::stat(model.c_str(), &before), 0);
  std::this_thread::sleep_for(std::chrono::nanoseconds(cache::kSettleNs + 100000000));  // settled
  OptimizeOptions o;
  o.level = OptLevel::Basic;
  ASSERT_EQ(load(model, d.path("c.db"), o).cache, "miss");
  std::string hex;
  ASSERT_TRUE(cache::hash_file(model, hex));
  EXPECT_EQ(remembered(model, d.path("c.db")), (cache::RememberedFile{hex, {}}));
  OptimizedModel hit = load(model, d.path("c.db"), o);
  EXPECT_EQ(hit.cache, "hit");
  // Rewritten in place: same inode, same size, the old mtime put back.
  const std::string b = small_model(16, "version-b").SerializeAsString();
  ASSERT_EQ(b.size(), read_bytes(model).size());
  write_bytes(model, b);
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, model.c_str(), times, 0), 0);
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "miss");
  auto s = cache::Store::open(d.path("c.db"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->list().size(), 2u);  // an entry per version
}

// A remembered model file keeps the external-data locations its bytes name, so a hit that does not
// read the model still hashes the external data: changed weights in the external file miss.
TEST(CacheSession, ARememberedModelStillHashesItsExternalData) {
  Dir d;
  const onnx::ModelProto m = with_external_weight(small_model());
  const std::string model = d.path("ext.onnx");
  save_model_proto(m, model);
  write_bytes(d.path("w.bin"), std::string(64, '\0'));
  std::this_thread::sleep_for(std::chrono::nanoseconds(cache::kSettleNs + 100000000));  // settled
  OptimizeOptions o;
  o.level = OptLevel::Basic;
  ASSERT_EQ(load(model, d.path("c.db"), o).cache, "miss");
  std::optional<cache::RememberedFile> f = remembered(model, d.path("c.db"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->external, std::vector<std::string>{"w.bin"});
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "hit");
  std::string w(64, '\0');
  w[0] = '\x3f';  // another weight
  write_bytes(d.path("w.bin"), w);
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "miss");
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "hit");
}

TEST(CacheSession, TraceRunsWithTheCacheOff) {
  Dir d;
  OptimizeOptions o;
  o.level = OptLevel::Basic;
  o.trace = true;
  OptimizedModel r = load(squeezenet(), d.path("c.db"), o);
  EXPECT_EQ(r.cache, "off");
  EXPECT_FALSE(std::filesystem::exists(d.path("c.db")));
}

TEST(CacheSession, CorruptEntryIsDroppedAndRebuilt) {
  Dir d;
  std::string model = d.path("m.onnx");
  save_model_proto(small_model(), model);
  OptimizeOptions o;
  o.level = OptLevel::Basic;
  ASSERT_EQ(load(model, d.path("c.db"), o).cache, "miss");
  raw_sql(d.path("c.db"), "UPDATE payloads SET payload = substr(payload, 1, length(payload) - 1) || x'00'");
  testing::internal::CaptureStderr();
  OptimizedModel again = load(model, d.path("c.db"), o);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(again.cache, "miss");
  EXPECT_NE(err.find("failed its checksum"), std::string::npos) << err;
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "hit");
}

TEST(CacheSession, AFileThatIsNotACacheIsLeftAloneAndTheRunSucceeds) {
  Dir d;
  const std::string garbage = "this is not an sqlite database, not even close ..................";
  write_bytes(d.path("c.db"), garbage);
  std::string model = d.path("m.onnx");
  save_model_proto(small_model(), model);
  OptimizeOptions o;
  o.level = OptLevel::Basic;
  testing::internal::CaptureStderr();
  OptimizedModel r = load(model, d.path("c.db"), o);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.cache, "off");
  EXPECT_NE(err.find("not a fusor cache"), std::string::npos) << err;
  EXPECT_TRUE(d.files_starting("c.db.").empty());
  EXPECT_EQ(read_bytes(d.path("c.db")), garbage);
  // The model itself given as the cache: refused, untouched.
  const std::string model_bytes = read_bytes(model);
  testing::internal::CaptureStderr();
  EXPECT_EQ(load(model, model, o).cache, "off");
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(read_bytes(model), model_bytes);
  EXPECT_TRUE(d.files_starting("m.onnx.").empty());
}

TEST(CacheSession, ADamagedCacheIsMovedAsideAndTheRunSucceeds) {
  Dir d;
  std::string model = d.path("m.onnx");
  save_model_proto(small_model(), model);
  OptimizeOptions o;
  o.level = OptLevel::Basic;
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "miss");
  std::string bytes = read_bytes(d.path("c.db"));
  for (size_t i = 100; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);
  write_bytes(d.path("c.db"), bytes);
  testing::internal::CaptureStderr();
  OptimizedModel r = load(model, d.path("c.db"), o);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.cache, "miss");
  EXPECT_NE(err.find("moved it aside"), std::string::npos) << err;
  EXPECT_EQ(d.files_starting("c.db.corrupt-").size(), 1u);
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "hit");
}

// ---- the key ----

class CacheKey : public testing::Test {
 protected:
  void SetUp() override {
    model_ = d_.path("m.onnx");
    save_model_proto(small_model(), model_);
    base_.level = OptLevel::Basic;
  }
  std::string key(const OptimizeOptions& o, const ShapeOverrides& ov = {}, const std::string& path = "") {
    auto k = optimized_cache_key(ModelSource::file(path.empty() ? model_ : path), ov, o);
    EXPECT_TRUE(k);
    return k.value_or("");
  }
  Dir d_;
  std::string model_;
  OptimizeOptions base_;
};

TEST_F(CacheKey, IsStableAndIgnoresThePath) {
  std::string k = key(base_);
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(key(base_), k);
  std::filesystem::create_directories(d_.path("elsewhere"));
  std::filesystem::copy_file(model_, d_.path("elsewhere/copy.onnx"));
  EXPECT_EQ(key(base_, {}, d_.path("elsewhere/copy.onnx")), k);
}

TEST_F(CacheKey, ChangesWithTheModelBytes) {
  std::string k = key(base_);
  save_model_proto(small_model(16, "another"), d_.path("other.onnx"));
  EXPECT_NE(key(base_, {}, d_.path("other.onnx")), k);
}

TEST_F(CacheKey, ChangesWithExternalDataBytes) {
  const onnx::ModelProto m = with_external_weight(small_model());
  save_model_proto(m, d_.path("ext.onnx"));
  write_bytes(d_.path("w.bin"), std::string(64, '\1'));
  std::string k1 = key(base_, {}, d_.path("ext.onnx"));
  write_bytes(d_.path("w.bin"), std::string(64, '\2'));
  std::string k2 = key(base_, {}, d_.path("ext.onnx"));
  EXPECT_NE(k1, k2);
}

TEST_F(CacheKey, ChangesWithProvidersAndLevel) {
  std::string k = key(base_);
  OptimizeOptions o = base_;
  o.providers = {"cpu", "cpu"};
  EXPECT_NE(key(o), k);
  o = base_;
  o.level = OptLevel::Extended;
  EXPECT_NE(key(o), k);
  o.level = OptLevel::Disabled;
  EXPECT_NE(key(o), k);
}

TEST_F(CacheKey, ChangesWithRuleFileTexts) {
  write_bytes(d_.path("a.rules"), "fusor-rules 1\n# a\n");
  OptimizeOptions o = base_;
  o.rule_files = {d_.path("a.rules")};
  std::string k = key(o);
  EXPECT_NE(k, key(base_));
  write_bytes(d_.path("a.rules"), "fusor-rules 1\n# a, edited\n");
  EXPECT_NE(key(o), k);
}

TEST(CacheSession, ChangedImportedRuleFileRebuildsTheEntry) {
  // Imports are not in the key (finding them means parsing); the entry records them instead.
  Dir d;
  std::string model = d.path("m.onnx");
  save_model_proto(small_model(), model);
  write_bytes(d.path("b.rules"), "fusor-rules 1\n# b, version 1\n");
  write_bytes(d.path("a.rules"), "fusor-rules 1\nimport \"b.rules\"\n# a\n");
  OptimizeOptions o;
  o.level = OptLevel::Basic;
  o.rule_files = {d.path("a.rules")};
  ASSERT_EQ(load(model, d.path("c.db"), o).cache, "miss");
  ASSERT_EQ(load(model, d.path("c.db"), o).cache, "hit");
  write_bytes(d.path("b.rules"), "fusor-rules 1\n# b, version 2\n");
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "miss");
  EXPECT_EQ(load(model, d.path("c.db"), o).cache, "hit");
}

TEST_F(CacheKey, ChangesWithTheProviderDefinitionText) {
  // A copy of the shipped providers/ and rules/ as the rules root, then one comment added.
  std::string root = d_.path("root");
  std::filesystem::create_directories(root);
  std::filesystem::copy(std::string(FUSOR_SOURCE_DIR) + "/providers", root + "/providers",
                        std::filesystem::copy_options::recursive);
  std::filesystem::copy(std::string(FUSOR_SOURCE_DIR) + "/rules", root + "/rules",
                        std::filesystem::copy_options::recursive);
  OptimizeOptions o = base_;
  o.rules_root = root;
  std::string k = key(o);
  EXPECT_EQ(k, key(base_));  // texts, not paths
  std::string text = read_bytes(root + "/providers/cpu.provider");
  write_bytes(root + "/providers/cpu.provider", text + "\n# edited\n");
  EXPECT_NE(key(o), k);
  write_bytes(root + "/providers/cpu.provider", text);
  // A shipped rule file of the level, too.
  std::string rule_file;
  for (const auto& e : std::filesystem::directory_iterator(root + "/rules/basic"))
    if (e.path().extension() == ".rules") { rule_file = e.path().string(); break; }
  ASSERT_FALSE(rule_file.empty());
  write_bytes(rule_file, read_bytes(rule_file) + "\n# edited\n");
  EXPECT_NE(key(o), k);
}

TEST_F(CacheKey, ChangesWithDisableAndNoDefaultRules) {
  std::string k = key(base_);
  OptimizeOptions o = base_;
  o.disabled = {"cse"};
  std::string k_cse = key(o);
  EXPECT_NE(k_cse, k);
  o.disabled = {"cse", "dead_code"};
  std::string k_two = key(o);
  EXPECT_NE(k_two, k_cse);
  o.disabled = {"dead_code", "cse"};  // a set: order does not matter
  EXPECT_EQ(key(o), k_two);
  o = base_;
  o.no_default_rules = true;
  EXPECT_NE(key(o), k);
}

TEST_F(CacheKey, ChangesWithDimAndShapeOverrides) {
  std::string k = key(base_);
  ShapeOverrides dim1, dim2, shape;
  dim1.dims.push_back({"N", 1});
  dim2.dims.push_back({"N", 2});
  shape.shapes.push_back({"x", {1, 16}});
  std::string k1 = key(base_, dim1), k2 = key(base_, dim2), ks = key(base_, shape);
  EXPECT_NE(k1, k);
  EXPECT_NE(k2, k1);
  EXPECT_NE(ks, k);
  EXPECT_NE(ks, k1);
}

TEST(CacheKeyParts, EngineBuildAndCpuFeaturesAreKnown) {
  // The key's engine field: the ELF build-id the linker wrote (changes with every rebuild).
  EXPECT_EQ(cache::build_identity().rfind("build-id:", 0), 0u) << cache::build_identity();
  EXPECT_EQ(cache::build_identity(), cache::build_identity());
#if defined(__x86_64__)
  EXPECT_NE(cache::cpu_features().find("sse4.2"), std::string::npos) << cache::cpu_features();
#endif
}

TEST_F(CacheKey, TraceIsNotCacheableNorIsAMissingFile) {
  OptimizeOptions o = base_;
  o.trace = true;
  EXPECT_FALSE(optimized_cache_key(ModelSource::file(model_), {}, o));
  EXPECT_FALSE(optimized_cache_key(ModelSource::file(d_.path("missing.onnx")), {}, base_));
}

}  // namespace
}  // namespace fusor::cachetest
