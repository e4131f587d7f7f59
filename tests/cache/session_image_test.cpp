// Session images (issue 17): a hit maps the image, restores the plan and computes byte-identical
// outputs; damaged, truncated or foreign images are dropped and rebuilt; a model edited in place
// (same size, same mtime) is a miss.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>

#include "cache/image_file.h"
#include "cache/image_model.h"
#include "cache/image_store.h"
#include "cache/key.h"
#include "cache/store.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/inputs.h"
#include "engine/session/optimize_cached.h"
#include "engine/session/prepare.h"
#include "engine/session/session_image.h"
#include "tests/cache/cache_test_util.h"

namespace fusor::cachetest {
namespace {

std::string squeezenet() { return std::string(FUSOR_SOURCE_DIR) + "/examples/models/squeezenet1_1.onnx"; }

PreparedSession prep(const std::string& model, const std::string& db, OptLevel level = OptLevel::All) {
  PrepareOptions o;
  o.optimize.level = level;
  o.exec.threads = 1;
  o.cache_path = db;
  o.use_cache = !db.empty();
  return prepare_session(ModelSource::file(model), o);
}

std::vector<Tensor> run(PreparedSession& s) {
  NamedTensors inputs;
  InputOptions opts;
  opts.seed = 11;
  std::vector<std::string> warnings;
  complete_inputs(*s.model->graph, inputs, opts, &warnings);
  return s.executor->run(inputs);
}

void expect_same_outputs(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].bit_equal(b[i])) << "output " << i;
}

std::vector<std::string> images_of(const std::string& db) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache::images_dir_of(db), ec))
    if (cache::is_image_name(e.path().filename().string())) out.push_back(e.path().string());
  return out;
}

void patch_byte(const std::string& path, uint64_t offset) {
  std::string bytes = read_bytes(path);
  ASSERT_LT(offset, bytes.size());
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x5a);
  write_bytes(path, bytes);
}

TEST(SessionImage, HitRestoresThePlanAndComputesByteIdenticalOutputs) {
  Dir d;
  const std::string db = d.path("c.db");
  PreparedSession miss = prep(squeezenet(), db);
  ASSERT_EQ(miss.cache, "miss");
  EXPECT_FALSE(miss.restored);
  ASSERT_EQ(images_of(db).size(), 1u);
  PreparedSession hit = prep(squeezenet(), db);
  ASSERT_EQ(hit.cache, "hit");
  EXPECT_TRUE(hit.restored);
  EXPECT_GT(hit.prepacked_mapped, 20) << "squeezenet's convolutions take their packed weights from the image";
  EXPECT_EQ(hit.prepacked_packed, 0);
  EXPECT_TRUE(hit.executor->plan().memory_restored());
  EXPECT_EQ(hit.executor->plan().memory()->layout.offset, miss.executor->plan().memory()->layout.offset);
  EXPECT_EQ(hit.report.provider_nodes, miss.report.provider_nodes);
  EXPECT_EQ(hit.report.rules_fired, miss.report.rules_fired);
  const std::vector<Tensor> a = run(miss), b = run(hit);
  expect_same_outputs(a, b);
  // And without the cache at all.
  PreparedSession off = prep(squeezenet(), "");
  EXPECT_EQ(off.cache, "off");
  expect_same_outputs(run(off), a);
  // A second run of the restored session (its memory state now from a run) is still the same.
  expect_same_outputs(run(hit), a);
}

TEST(SessionImage, OptimizeStoresTheModelAndTheFirstRunAddsThePlan) {
  Dir d;
  const std::string db = d.path("c.db");
  CacheOptions c;
  c.path = db;
  OptimizeOptions o;
  o.level = OptLevel::All;
  OptimizedModel opt = load_optimized(ModelSource::file(squeezenet()), {}, o, c);
  ASSERT_EQ(opt.cache, "miss");
  ASSERT_EQ(images_of(db).size(), 1u);
  const std::string first = images_of(db)[0];
  PreparedSession s1 = prep(squeezenet(), db);
  EXPECT_EQ(s1.cache, "hit");
  EXPECT_FALSE(s1.restored);  // no plan yet: planned, then stored with it
  ASSERT_EQ(images_of(db).size(), 1u);
  EXPECT_NE(images_of(db)[0], first) << "the image with the plan replaces the one without";
  PreparedSession s2 = prep(squeezenet(), db);
  EXPECT_TRUE(s2.restored);
  expect_same_outputs(run(s1), run(s2));
  // `fusor optimize` still hits, and saves the same model as its miss did.
  OptimizedModel again = load_optimized(ModelSource::file(squeezenet()), {}, o, c);
  EXPECT_EQ(again.cache, "hit");
  EXPECT_EQ(serialize_model(*again.model), serialize_model(*opt.model));
}

TEST(SessionImage, DamagedOrTruncatedImageIsDroppedAndRebuiltWithAWarning) {
  for (const char* damage : {"meta", "header", "truncate"}) {
    SCOPED_TRACE(damage);
    Dir d;
    const std::string db = d.path("c.db");
    ASSERT_EQ(prep(squeezenet(), db).cache, "miss");
    ASSERT_EQ(images_of(db).size(), 1u);
    const std::string img = images_of(db)[0];
    if (std::string(damage) == "meta") patch_byte(img, 4096 + 100);
    if (std::string(damage) == "header") patch_byte(img, 40);
    if (std::string(damage) == "truncate") fs::resize_file(img, fs::file_size(img) / 2);
    testing::internal::CaptureStderr();
    PreparedSession again = prep(squeezenet(), db);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(again.cache, "miss");
    EXPECT_NE(err.find("dropped it"), std::string::npos) << err;
    PreparedSession hit = prep(squeezenet(), db);
    EXPECT_EQ(hit.cache, "hit");
    EXPECT_TRUE(hit.restored);
    expect_same_outputs(run(again), run(hit));
    EXPECT_EQ(images_of(db).size(), 1u);
  }
}

TEST(SessionImage, VerifyChecksEveryImageSectionAndDropsADamagedOne) {
  Dir d;
  const std::string db = d.path("c.db");
  ASSERT_EQ(prep(squeezenet(), db).cache, "miss");
  const std::string img = images_of(db)[0];
  {
    auto store = cache::Store::open(db);
    cache::VerifyReport ok = store->verify(false);
    EXPECT_EQ(ok.images, 1);
    EXPECT_TRUE(ok.bad_keys.empty());
  }
  patch_byte(img, fs::file_size(img) - 100);  // inside the weights: a hit does not hash them
  auto store = cache::Store::open(db);
  cache::VerifyReport bad = store->verify(true);
  ASSERT_EQ(bad.bad_keys.size(), 1u);
  EXPECT_NE(bad.problems[0].find("DATA section checksum"), std::string::npos) << bad.problems[0];
  EXPECT_TRUE(images_of(db).empty()) << "the damaged image is deleted with its entry";
  EXPECT_EQ(store->list().size(), 0u);
  EXPECT_EQ(prep(squeezenet(), db).cache, "miss");
}

TEST(SessionImage, ImageOfAnotherEngineOrCpuIsNotUsed) {
  Dir d;
  cache::ImageDataBuilder data;
  const float w[16] = {1, 2, 3};
  data.add(w, sizeof w);
  cache::WrittenImage img = cache::write_image_tmp(d.dir(), "engine A cpu=x", "meta bytes", data);
  cache::publish_image(img, d.dir());
  const std::string path = d.path(img.name);
  std::string why;
  EXPECT_FALSE(cache::MappedImage::open(path, "engine B cpu=x", cache::ImageCheck::Structure, &why));
  EXPECT_NE(why.find("another engine build"), std::string::npos) << why;
  auto same = cache::MappedImage::open(path, "engine A cpu=x", cache::ImageCheck::Full, &why);
  ASSERT_TRUE(same) << why;
  EXPECT_EQ(same->meta(), "meta bytes");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(same->data()) % cache::kImageDataAlign, 0u);
  EXPECT_EQ(reinterpret_cast<const float*>(same->data())[2], 3.0f);
  EXPECT_TRUE(cache::MappedImage::open(path, "", cache::ImageCheck::Full, &why)) << "verify accepts any origin";
  // The name is the content: rewriting the same bytes gives the same name.
  cache::WrittenImage again = cache::write_image_tmp(d.dir(), "engine A cpu=x", "meta bytes", data);
  EXPECT_EQ(again.name, img.name);
  fs::remove(again.tmp_path);
  // The session's identity names this engine's build and CPU.
  EXPECT_NE(image_identity().find("cpu="), std::string::npos);
  EXPECT_NE(image_identity().find(cache::build_identity()), std::string::npos);
}

TEST(SessionImage, ModelEditedInPlaceWithTheSameSizeAndMtimeIsAMiss) {
  Dir d;
  const std::string db = d.path("c.db"), model = d.path("m.onnx");
  onnx::ModelProto m = small_model(64);
  save_model_proto(m, model);
  struct stat st0 {};
  ASSERT_EQ(::stat(model.c_str(), &st0), 0);
  PreparedSession a = prep(model, db, OptLevel::Basic);
  ASSERT_EQ(a.cache, "miss");
  const std::vector<Tensor> out_a = run(a);
  // Same length, other weights, and the old timestamps put back.
  m.mutable_graph()->mutable_initializer(0)->set_float_data(3, 7.5f);
  save_model_proto(m, model);
  struct stat st1 {};
  ASSERT_EQ(::stat(model.c_str(), &st1), 0);
  ASSERT_EQ(st1.st_size, st0.st_size);
  const struct timespec times[2] = {st0.st_atim, st0.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, model.c_str(), times, 0), 0);
  PreparedSession b = prep(model, db, OptLevel::Basic);
  EXPECT_EQ(b.cache, "miss");
  const std::vector<Tensor> out_b = run(b);
  EXPECT_FALSE(out_b[0].bit_equal(out_a[0]));
  PreparedSession plain = prep(model, "", OptLevel::Basic);
  expect_same_outputs(run(plain), out_b);
}

// Models with subgraphs, sequences and optional values: the image form keeps every part
// save_model writes.
TEST(SessionImage, RoundTripKeepsTheWholeModel) {
  const std::string root = "/usr/share/libonnx-testdata/data/node/";
  for (const char* name : {"test_if", "test_loop11", "test_scan9_sum", "test_if_seq", "test_loop16_seq_none",
                           "test_strnormalizer_export_monday_casesensintive_lower", "test_optional_get_element"}) {
    SCOPED_TRACE(name);
    const std::string path = root + name + "/model.onnx";
    if (!fs::exists(path)) continue;
    std::unique_ptr<Model> m = load_model(path);
    cache::ImageDataBuilder data;
    const std::string meta = cache::encode_image_meta(*m, nullptr, data);
    Dir d;
    cache::WrittenImage w = cache::write_image_tmp(d.dir(), "id", meta, data);
    cache::publish_image(w, d.dir());
    std::string why;
    auto img = cache::MappedImage::open(d.path(w.name), "id", cache::ImageCheck::Full, &why);
    ASSERT_TRUE(img) << why;
    cache::DecodedImage back = cache::decode_image(img, path);
    back.model->graph->verify();
    EXPECT_EQ(serialize_model(*back.model), serialize_model(*m));
    // From the builder (a miss's form) as well.
    cache::DecodedImage mem = cache::decode_image(meta, data, nullptr, path);
    EXPECT_EQ(serialize_model(*mem.model), serialize_model(*m));
  }
}

TEST(SessionImage, GarbageMetaIsAnErrorNotACrash) {
  Dir d;
  cache::ImageDataBuilder data;
  std::string meta(256, '\x11');
  cache::WrittenImage w = cache::write_image_tmp(d.dir(), "id", meta, data);
  cache::publish_image(w, d.dir());
  std::string why;
  auto img = cache::MappedImage::open(d.path(w.name), "id", cache::ImageCheck::Full, &why);
  ASSERT_TRUE(img) << why;  // the container is intact; its contents are not a model
  EXPECT_THROW(cache::decode_image(img, "x"), Error);
}

}  // namespace
}  // namespace fusor::cachetest
