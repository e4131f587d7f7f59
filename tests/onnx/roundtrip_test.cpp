// Round trip over every libonnx-testdata model whose original passes the ONNX checker: load,
// save, compare the saved ModelProto with the original (independently decoded), check the saved
// model with onnx::checker, and reload it.
#include <gtest/gtest.h>
#include <onnx/checker.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "proto_builder.h"
#include "proto_compare.h"

using namespace fusor;
namespace fs = std::filesystem;

namespace {

const char* kTestData = "/usr/share/libonnx-testdata/data";

std::vector<std::string> testdata_models() {
  std::vector<std::string> out;
  if (!fs::exists(kTestData)) return out;
  for (const auto& suite : fs::directory_iterator(kTestData))
    if (suite.is_directory())
      for (const auto& t : fs::directory_iterator(suite.path())) {
        fs::path m = t.path() / "model.onnx";
        if (fs::exists(m)) out.push_back(m.string());
      }
  std::sort(out.begin(), out.end());
  return out;
}

bool parse_file(const std::string& path, onnx::ModelProto* m) {
  std::ifstream f(path, std::ios::binary);
  return m->ParseFromIstream(&f);
}

}  // namespace

TEST(RoundTrip, EveryCheckerValidTestdataModel) {
  auto models = testdata_models();
  ASSERT_GT(models.size(), 1000u) << "libonnx-testdata is missing";
  test::TempDir dir;
  size_t valid = 0, passed = 0;
  std::vector<std::string> failures;
  for (const auto& path : models) {
    onnx::ModelProto orig;
    ASSERT_TRUE(parse_file(path, &orig)) << path;
    try {
      onnx::checker::check_model(orig);
    } catch (const std::exception&) {
      continue;
    }
    ++valid;
    std::string out = dir.file("rt.onnx");
    try {
      auto model = load_model(path);
      model->graph->verify();
      save_model(*model, out);
      onnx::ModelProto saved;
      if (!parse_file(out, &saved)) throw std::runtime_error("saved model does not parse");
      std::string diff = test::compare_models(orig, saved);
      if (!diff.empty()) throw std::runtime_error(diff);
      onnx::checker::check_model(saved);
      auto again = load_model(out);
      again->graph->verify();
      if (again->graph->num_nodes() != model->graph->num_nodes()) throw std::runtime_error("reload changed the node count");
      ++passed;
    } catch (const std::exception& e) {
      failures.push_back(path + ": " + e.what());
    }
  }
  std::cout << "[round trip] models: " << models.size() << ", checker-valid: " << valid << ", round-tripped: " << passed
            << "\n";
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(passed, valid);
}
