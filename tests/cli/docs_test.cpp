// docs/cli.md documents every key the JSON reports print, and every subcommand.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/cli/cli_harness.h"

namespace fusor::clitest {
namespace {

std::string cli_md() { return read_file(std::string(FUSOR_SOURCE_DIR) + "/docs/cli.md"); }

void expect_keys_documented(const json::Value& report, const std::string& what) {
  std::string doc = cli_md();
  ASSERT_FALSE(doc.empty()) << "docs/cli.md is missing";
  for (const auto& [key, value] : report.as_object())
    EXPECT_NE(doc.find("`" + key + "`"), std::string::npos) << what << " key '" << key << "' is not in docs/cli.md";
}

TEST(CliDocs, InspectKeysAreDocumented) {
  RunResult r = run_fusor({"inspect", example_model(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_keys_documented(r.json(), "inspect");
}

TEST(CliDocs, OptimizeKeysAreDocumented) {
  TempDir d;
  RunResult r = run_fusor({"optimize", example_model(), "-o", d.path("o.onnx"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_keys_documented(r.json(), "optimize");
}

TEST(CliDocs, EveryCommandHasASection) {
  RunResult r = run_fusor({"--help"});
  ASSERT_EQ(r.exit_code, 0);
  std::string doc = cli_md();
  // Command lines in the global help look like "  NAME    summary".
  size_t at = r.out.find("commands:\n");
  ASSERT_NE(at, std::string::npos);
  std::istringstream lines(r.out.substr(at + 10));
  std::string line;
  int n = 0;
  while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
    std::string name = line.substr(2, line.find(' ', 2) - 2);
    EXPECT_NE(doc.find("## fusor " + name), std::string::npos) << "no '## fusor " << name << "' section";
    ++n;
  }
  EXPECT_GE(n, 2);
}

}  // namespace
}  // namespace fusor::clitest
