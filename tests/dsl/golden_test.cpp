// Golden diagnostics tests. For every tests/dsl/golden/NAME.rules or NAME.provider, the
// diagnostics text (FILE:LINE:COL: error: ..., source line, caret) must equal NAME.err exactly.
// The test runs from the source directory and names files relative to it, so the goldens hold
// relative paths and do not depend on where the tree is checked out.
//
// After an intended change to messages, regenerate and review the diff:
//   FUSOR_UPDATE_GOLDEN=1 ./test_dsl --gtest_filter='Golden/*'
//   git diff tests/dsl/golden
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dsl/provider.h"
#include "dsl/rules.h"

namespace fs = std::filesystem;
using namespace fusor::dsl;

namespace {

const char* kGoldenDir = "tests/dsl/golden";

std::vector<std::string> golden_inputs() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(FUSOR_SOURCE_DIR) / kGoldenDir)) {
    auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".rules" || ext == ".provider")) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class Golden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_EQ(chdir(FUSOR_SOURCE_DIR), 0); }
};

TEST_P(Golden, DiagnosticsMatch) {
  const fs::path input = fs::path(kGoldenDir) / GetParam();
  fs::path expected_path = input;
  expected_path.replace_extension(".err");
  Diagnostics diags;
  if (input.extension() == ".provider")
    load_provider(input.string(), {}, diags);
  else
    load_rules({input.string()}, {}, diags);
  const std::string actual = diags.str();
  if (std::getenv("FUSOR_UPDATE_GOLDEN")) {
    std::ofstream(expected_path, std::ios::binary) << actual;
    GTEST_SKIP() << "regenerated " << expected_path;
  }
  ASSERT_TRUE(fs::exists(expected_path)) << "missing golden " << expected_path << "; run with FUSOR_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, read(expected_path)) << "diagnostics of " << input << " changed";
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Golden, Golden, ::testing::ValuesIn(golden_inputs()), param_name);

// Every golden with errors must report at least one; `ok_*` goldens must report none. This
// keeps a regenerated golden from silently accepting a check that stopped firing.
TEST(GoldenSet, ErrorGoldensReportErrors) {
  for (const auto& name : golden_inputs()) {
    fs::path err = fs::path(FUSOR_SOURCE_DIR) / kGoldenDir / name;
    err.replace_extension(".err");
    std::string text = read(err);
    if (name.rfind("ok_", 0) == 0)
      EXPECT_EQ(text, "") << name;
    else
      EXPECT_NE(text.find(": error: "), std::string::npos) << name << " reports no error";
  }
}

}  // namespace
