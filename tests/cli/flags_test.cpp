// The flag parser and global flags, observed through the binary.
#include <gtest/gtest.h>

#include "tests/cli/cli_harness.h"

namespace fusor::clitest {
namespace {

TEST(CliFlags, Version) {
  RunResult r = run_fusor({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("fusor ", 0), 0u) << r.out;
}

TEST(CliFlags, GlobalHelpListsEveryCommand) {
  RunResult r = run_fusor({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* cmd : {"inspect", "optimize"}) EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
}

TEST(CliFlags, NoCommandPrintsHelpAndFails) {
  RunResult r = run_fusor({});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("usage:"), std::string::npos);
}

TEST(CliFlags, HelpOnEachCommandShowsItsFlags) {
  struct Case {
    const char* cmd;
    std::vector<std::string> flags;
  };
  for (const Case& c : {Case{"inspect", {"--json", "--dim", "--shape", "--log-level"}},
                        Case{"optimize", {"-o, --output", "--level", "--provider", "--dim", "--shape", "--json"}}}) {
    RunResult r = run_fusor({c.cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << c.cmd;
    EXPECT_EQ(r.out.rfind(std::string("usage: fusor ") + c.cmd, 0), 0u) << r.out;
    for (const std::string& f : c.flags) EXPECT_NE(r.out.find(f), std::string::npos) << c.cmd << " " << f;
  }
}

TEST(CliFlags, HelpWinsOverBadArguments) {
  RunResult r = run_fusor({"optimize", "--level", "nonsense", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliFlags, EqualsAndSpaceFormsAgree) {
  TempDir d;
  RunResult a = run_fusor({"inspect", example_model(), "--json", "--dim=N=2"});
  RunResult b = run_fusor({"inspect", example_model(), "--json", "--dim", "N=2"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(CliFlags, ShortOutputFlagForms) {
  TempDir d;
  EXPECT_EQ(run_fusor({"optimize", example_model(), "-o", d.path("a.onnx"), "--level", "disabled"}).exit_code, 0);
  EXPECT_EQ(run_fusor({"optimize", example_model(), "-o" + d.path("b.onnx"), "--level", "disabled"}).exit_code, 0);
  EXPECT_EQ(read_file(d.path("a.onnx")), read_file(d.path("b.onnx")));
}

TEST(CliFlags, RepeatableFlagsAccumulate) {
  // Two --dim flags for one name: both are accepted and the last one wins.
  RunResult r = run_fusor({"inspect", example_model(), "--json", "--dim", "N=2", "--dim", "N=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["inputs"][0]["shape"][0].as_int(), 5);
}

TEST(CliFlags, DoubleDashEndsFlags) {
  RunResult r = run_fusor({"inspect", "--json", "--", example_model()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliFlags, VerboseLogsToStderrOnly) {
  TempDir d;
  RunResult quiet = run_fusor({"optimize", example_model(), "-o", d.path("q.onnx"), "--json"});
  RunResult loud = run_fusor({"-v", "optimize", example_model(), "-o", d.path("l.onnx"), "--json"});
  RunResult loud2 = run_fusor({"optimize", example_model(), "-o", d.path("l.onnx"), "--json", "--log-level=info"});
  ASSERT_EQ(quiet.exit_code, 0);
  ASSERT_EQ(loud.exit_code, 0);
  ASSERT_EQ(loud2.exit_code, 0);
  EXPECT_TRUE(quiet.err.empty()) << quiet.err;
  EXPECT_NE(loud.err.find("fusor: info:"), std::string::npos) << loud.err;
  EXPECT_NE(loud2.err.find("fusor: info:"), std::string::npos) << loud2.err;
  loud.json();  // stdout stays pure JSON
}

}  // namespace
}  // namespace fusor::clitest
