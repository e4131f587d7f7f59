// `fusor rules test` through the binary ($FUSOR_BIN): exit codes, the text report's lines, and
// every key of the --json report documented in docs/cli.md.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chain_model.h"
#include "core/util/json.h"

using namespace fusor;
namespace fs = std::filesystem;

namespace {

struct CliRun {
  int code = -1;
  std::string out;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class Temp {
 public:
  Temp() : dir_(fs::temp_directory_path() / ("fusor_ruletest_cli_" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
  }
  ~Temp() { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

CliRun run_fusor(const Temp& t, const std::vector<std::string>& args) {
  const char* bin = std::getenv("FUSOR_BIN");
  std::string cmd = std::string("'") + (bin ? bin : FUSOR_BINARY_DIR "/bin/fusor") + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  std::string out = t.path("stdout.txt");
  cmd += " >'" + out + "' 2>'" + t.path("stderr.txt") + "'";
  CliRun r;
  int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  return r;
}

const char* kRules = R"(fusor-rules 1
rule identity_gone
  match { y = Identity(x) }
  rewrite { y = x }
  test { x: float[2, 8] }

rule add_one_dropped
  match { y = Add(x, 1.0) }
  rewrite { y = x }
  test wrong { x: float[2, 8] }
)";

std::string model(const Temp& t) {
  std::string p = t.path("m.onnx");
  test::save_chain_model(p, {"Identity", "Add", "Relu"});
  return p;
}

void expect_documented(const json::Value& v, const std::string& doc, const std::string& where) {
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) expect_documented(v[i], doc, where);
    return;
  }
  if (!v.is_object()) return;
  for (const auto& [key, value] : v.as_object()) {
    if (where == "rules_fired") continue;  // rule names, not keys
    EXPECT_NE(doc.find("`" + key + "`"), std::string::npos) << "key '" << key << "' is not in docs/cli.md";
    expect_documented(value, doc, key);
  }
}

}  // namespace

TEST(RulesTestCli, FailingTestExits4AndNamesTheRule) {
  Temp t;
  std::string rules = t.write("a.rules", kRules);
  CliRun r = run_fusor(t, {"rules", "test", rules});
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_NE(r.out.find("PASS  identity_gone  -  " + rules + ":5  difference 0 <= tolerance 0.0001"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL  add_one_dropped  wrong  " + rules + ":10  difference"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 test(s): 1 passed, 1 failed"), std::string::npos) << r.out;
}

TEST(RulesTestCli, PassingTestsExit0AndRequireTests) {
  Temp t;
  std::string rules = t.write("ok.rules", R"(fusor-rules 1
rule identity_gone
  match { y = Identity(x) }
  rewrite { y = x }
  test { x: float[3] }
rule untested
  match { y = Dropout(x) }
  rewrite { y = x }
)");
  CliRun r = run_fusor(t, {"rules", "test", rules});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("NOTEST  untested"), std::string::npos) << r.out;
  r = run_fusor(t, {"rules", "test", "--require-tests", rules});
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_NE(r.out.find("FAIL  untested  -  " + rules + ":6  the rule has no test block"), std::string::npos) << r.out;
}

TEST(RulesTestCli, RuleFlagSelectsTests) {
  Temp t;
  std::string rules = t.write("a.rules", kRules);
  CliRun r = run_fusor(t, {"rules", "test", rules, "--rule", "identity_gone"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("add_one_dropped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 test(s): 1 passed, 0 failed"), std::string::npos) << r.out;
  EXPECT_EQ(run_fusor(t, {"rules", "test", rules, "--rule", "no_such_rule"}).code, 1);
}

TEST(RulesTestCli, BadRulesExit2AndBadFlagsExit1) {
  Temp t;
  std::string bad = t.write("bad.rules", "fusor-rules 1\nrule r\n  match { y = NoSuchOp(x) }\n  rewrite { y = x }\n");
  EXPECT_EQ(run_fusor(t, {"rules", "test", bad}).code, 2);
  std::string ok = t.write("ok.rules", kRules);
  EXPECT_EQ(run_fusor(t, {"rules", "test", ok, "--tolerance", "-1"}).code, 1);
  EXPECT_EQ(run_fusor(t, {"rules", "test"}).code, 1);
  EXPECT_EQ(run_fusor(t, {"rules", "test", ok, "--model", t.path("missing.onnx")}).code, 2);
}

TEST(RulesTestCli, ModelModeNamesTheBreakingRule) {
  Temp t;
  std::string rules = t.write("a.rules", kRules);
  std::string m = model(t);
  CliRun r = run_fusor(t, {"rules", "test", rules, "--model", m, "--tolerance", "1e-3"});
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_NE(r.out.find("fired: add_one_dropped 1x, identity_gone 1x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL  add_one_dropped  " + rules + ":7  alone"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS  identity_gone  " + rules + ":2  alone"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rules that break equivalence: add_one_dropped\n"), std::string::npos) << r.out;
}

TEST(RulesTestCli, JsonKeysAreDocumented) {
  Temp t;
  std::string rules = t.write("a.rules", std::string(kRules) + "rule untested\n  match { y = Dropout(x) }\n  rewrite { y = x }\n");
  std::string m = model(t);
  CliRun r = run_fusor(t, {"rules", "test", rules, "--model", m, "--json"});
  EXPECT_EQ(r.code, 4);
  json::Value v = json::parse(r.out);
  EXPECT_EQ(v["tests_passed"].as_int(), 1);
  EXPECT_EQ(v["tests_failed"].as_int(), 1);
  EXPECT_EQ(v["rules_without_tests"].as_int(), 1);
  EXPECT_FALSE(v["ok"].as_bool());
  ASSERT_EQ(v["breaking_rules"].size(), 1u);
  EXPECT_EQ(v["breaking_rules"][0].as_string(), "add_one_dropped");
  EXPECT_EQ(v["tests"][1]["outcome"].as_string(), "mismatch");
  EXPECT_EQ(v["models"][0]["rules_fired"]["identity_gone"].as_int(), 1);
  EXPECT_EQ(v["models"][0]["rules_fired"]["untested"].as_int(), 0);
  expect_documented(v, slurp(std::string(FUSOR_SOURCE_DIR) + "/docs/cli.md"), "");
}
