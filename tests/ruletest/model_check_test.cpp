// Model mode (engine/ruletest/model_check.h) on a small model built here: how often each rule
// fired, and which rule breaks equivalence, by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "dsl/rules.h"
#include "chain_model.h"
#include "engine/ruletest/model_check.h"

using namespace fusor;
using namespace fusor::ruletest;

namespace {

dsl::RuleSet load(const std::string& text) {
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules_from_text("m.rules", "fusor-rules 1\n" + text, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return set;
}

std::string small_model() {
  std::string path = std::filesystem::temp_directory_path() / ("fusor_ruletest_" + std::to_string(getpid()) + ".onnx");
  test::save_chain_model(path, {"Identity", "Relu", "Identity", "Relu", "Add", "Sigmoid"});
  return path;
}

const RuleCheck* find(const ModelCheck& mc, const std::string& rule) {
  for (const RuleCheck& c : mc.checks)
    if (c.rule == rule) return &c;
  return nullptr;
}

}  // namespace

TEST(ModelCheck, NamesTheRuleThatBreaksEquivalence) {
  auto set = load(R"(
rule identity_gone
  match { y = Identity(x) }
  rewrite { y = x }
rule add_one_dropped
  match { y = Add(x, 1.0) }
  rewrite { y = x }
rule relu_twice
  match { t = Relu(x)
          y = Relu(t) }
  rewrite { y = Relu(x) }
rule never
  match { y = Softmax(x) }
  rewrite { y = x }
)");
  std::string path = small_model();
  ModelCheck mc = check_model(path, {}, set, {});
  std::filesystem::remove(path);

  EXPECT_EQ(mc.model, path);
  EXPECT_EQ(mc.fired["identity_gone"], 2);
  EXPECT_EQ(mc.fired["add_one_dropped"], 1);
  EXPECT_EQ(mc.fired["relu_twice"], 1);
  EXPECT_EQ(mc.fired["never"], 0);
  EXPECT_TRUE(mc.failed());
  // The whole set includes the wrong rule, so it differs too: sigmoid(r + 1) vs sigmoid(r).
  EXPECT_TRUE(mc.set_failed);
  EXPECT_TRUE(mc.set_measured);
  EXPECT_GT(mc.set_diff.error, 1e-2);

  ASSERT_EQ(mc.checks.size(), 3u);  // one per rule that fired
  const RuleCheck* bad = find(mc, "add_one_dropped");
  ASSERT_NE(bad, nullptr);
  EXPECT_TRUE(bad->failed);
  EXPECT_EQ(bad->mode, "alone");
  EXPECT_EQ(bad->fired_alone, 1);
  EXPECT_GT(bad->diff.error, 1e-2);
  EXPECT_NE(bad->message.find("output 'y'"), std::string::npos) << bad->message;

  const RuleCheck* id = find(mc, "identity_gone");
  ASSERT_NE(id, nullptr);
  EXPECT_FALSE(id->failed) << id->message;
  EXPECT_EQ(id->mode, "alone");
  EXPECT_EQ(id->diff.error, 0.0);

  // Relu(Relu) only exists once the Identity between them is gone: checked in context (the
  // whole set with it against the whole set without it), where it is exact.
  const RuleCheck* relu = find(mc, "relu_twice");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->fired_alone, 0);
  EXPECT_EQ(relu->mode, "in_context");
  EXPECT_FALSE(relu->failed) << relu->message;
  EXPECT_TRUE(relu->measured);
  EXPECT_EQ(relu->diff.error, 0.0);
}

TEST(ModelCheck, CorrectRulesPass) {
  auto set = load(R"(
rule identity_gone
  match { y = Identity(x) }
  rewrite { y = x }
)");
  std::string path = small_model();
  ModelCheck mc = check_model(path, {}, set, {});
  std::filesystem::remove(path);
  EXPECT_FALSE(mc.failed()) << mc.set_message;
  EXPECT_EQ(mc.fired["identity_gone"], 2);
  EXPECT_EQ(mc.set_diff.error, 0.0);
  ASSERT_EQ(mc.checks.size(), 1u);
  EXPECT_FALSE(mc.checks[0].failed);
}
