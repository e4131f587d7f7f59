// The process's rule cache (engine/session/rule_cache.h): a second load of unchanged files reuses
// the lowered rules; an edit to any file read (an import included) is seen by the next load; a file
// with an error fails every time; optimize()'s rule-set hash over the cached file list equals the
// hash computed from the files (rule_set_hash.h).
#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/optimize.h"
#include "engine/session/rule_cache.h"
#include "engine/session/rule_set_hash.h"
#include "tests/session/session_test_util.h"

namespace fusor::sessiontest {
namespace {

const char* kReluRule =
    "rule relu_relu\n"
    "  level basic\n"
    "  match { a = Relu(x)\n"
    "          y = Relu(a) }\n"
    "  rewrite { y = Relu(x) }\n";

const char* kIdentityRule =
    "rule identity_drop\n"
    "  level basic\n"
    "  match { y = Identity(x) }\n"
    "  rewrite { y = x }\n";

std::vector<std::string> names(const LoadedRuleSet& s) {
  std::vector<std::string> out;
  for (const Rule& r : s.rules) out.push_back(r.name);
  return out;
}

TEST(RuleCache, UnchangedFilesAreLoadedOnce) {
  TempDir d;
  write_text(d.path("a.rules"), std::string("fusor-rules 1\n") + kReluRule);
  const std::vector<std::string> files = {d.path("a.rules")};
  const RuleCacheStats before = rule_cache_stats();
  auto first = load_rule_set(files, OptLevel::Extended, "cpu");
  auto second = load_rule_set(files, OptLevel::Extended, "cpu");
  const RuleCacheStats after = rule_cache_stats();
  EXPECT_EQ(after.misses - before.misses, 1);
  EXPECT_EQ(after.hits - before.hits, 1);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(names(*first), std::vector<std::string>{"relu_relu"});
  EXPECT_EQ(first->files, files);
  // Another level is another selection: not the same entry.
  auto basic_level = load_rule_set(files, OptLevel::Basic, "cpu");
  EXPECT_NE(basic_level.get(), first.get());
  EXPECT_EQ(rule_cache_stats().misses - after.misses, 1);
}

TEST(RuleCache, AnEditedImportIsSeenByTheNextLoad) {
  TempDir d;
  write_text(d.path("inc.rules"), std::string("fusor-rules 1\n") + kReluRule);
  write_text(d.path("top.rules"), "fusor-rules 1\nimport \"inc.rules\"\n");
  const std::vector<std::string> files = {d.path("top.rules")};
  auto first = load_rule_set(files, OptLevel::All, "cpu");
  EXPECT_EQ(names(*first), std::vector<std::string>{"relu_relu"});
  ASSERT_EQ(first->files.size(), 2u);
  write_text(d.path("inc.rules"), std::string("fusor-rules 1\n") + kReluRule + kIdentityRule);
  auto second = load_rule_set(files, OptLevel::All, "cpu");
  EXPECT_NE(first.get(), second.get());
  EXPECT_EQ(second->rules.size(), 2u);
  // The earlier result is untouched (a session holding it keeps its rules).
  EXPECT_EQ(first->rules.size(), 1u);
}

TEST(RuleCache, AFileWithAnErrorFailsEveryTimeAndIsNotCached) {
  TempDir d;
  write_text(d.path("bad.rules"), "fusor-rules 1\nrule broken\n  match { y = NoSuchOp(x) }\n  rewrite { y = x }\n");
  const std::vector<std::string> files = {d.path("bad.rules")};
  for (int i = 0; i < 2; ++i) {
    try {
      load_rule_set(files, OptLevel::All, "cpu");
      ADD_FAILURE() << "a rule file with an error loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("bad.rules"), std::string::npos) << e.what();
    }
  }
  write_text(d.path("bad.rules"), std::string("fusor-rules 1\n") + kReluRule);
  EXPECT_EQ(load_rule_set(files, OptLevel::All, "cpu")->rules.size(), 1u);
}

TEST(RuleCache, OptimizeHashesTheFilesItRead) {
  TempDir d;
  write_text(d.path("inc.rules"), std::string("fusor-rules 1\n") + kReluRule);
  write_text(d.path("top.rules"), "fusor-rules 1\nimport \"inc.rules\"\n");
  OptimizeOptions o;
  o.level = OptLevel::Extended;
  o.rule_files = {d.path("top.rules")};
  for (int i = 0; i < 2; ++i) {  // a miss, then a hit
    std::unique_ptr<Model> m = load_model(squeezenet());
    const OptimizeReport r = optimize(*m, o);
    EXPECT_EQ(r.rule_set_hash, rule_set_hash(o));
  }
}

}  // namespace
}  // namespace fusor::sessiontest
