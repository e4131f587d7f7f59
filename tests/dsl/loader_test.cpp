// Loading: in-memory text, imports (relative, once each, load order), diagnostics format,
// error recovery counts, and the op catalog.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dsl/fusor_ops.h"
#include "dsl/op_catalog.h"
#include "dsl/parser.h"
#include "dsl/rules.h"

using namespace fusor::dsl;
namespace fs = std::filesystem;

namespace {

TEST(Loader, FromTextWithoutErrors) {
  Diagnostics d;
  RuleSet rs = load_rules_from_text("mem.rules",
                                    "fusor-rules 1\n"
                                    "rule a match { y = Identity(x) } rewrite { y = x }\n"
                                    "rule b level all match { y = Dropout(x) } rewrite { y = x }\n",
                                    {}, d);
  EXPECT_TRUE(d.empty()) << d.str();
  ASSERT_EQ(rs.rules.size(), 2u);
  EXPECT_EQ(rs.rules[1]->level, fusor::OptLevel::All);
  EXPECT_EQ(rs.rules[1]->order, 1u);
  EXPECT_EQ(rs.rules[0]->loc.str(), "mem.rules:2:1");
}

TEST(Loader, DiagnosticFormatHasSourceLineAndCaret) {
  Diagnostics d;
  load_rules_from_text("m.rules", "fusor-rules 1\nrule a\n\tmatch { y = Reluu(x) }\n  rewrite { y = x }\n", {}, d);
  EXPECT_EQ(d.str(),
            "m.rules:3:14: error: unknown op 'Reluu' at opset 17; did you mean 'Relu'?\n"
            "\tmatch { y = Reluu(x) }\n"
            "\t            ^\n");
}

TEST(Loader, RecoversAtEveryRule) {
  std::string text = "fusor-rules 1\n";
  for (int i = 0; i < 5; ++i) text += "rule r" + std::to_string(i) + " match { y = Relu(x }\n rewrite { y = x }\n";
  text += "rule good match { y = Relu(x) } rewrite { y = x }\n";
  Diagnostics d;
  RuleSet rs = load_rules_from_text("r.rules", text, {}, d);
  EXPECT_EQ(d.error_count(), 5u) << d.str();
  ASSERT_EQ(rs.rules.size(), 1u);
  EXPECT_EQ(rs.rules[0]->name, "good");
  EXPECT_TRUE(rs.files[0]->has_errors);
}

TEST(Loader, NeverThrowsOnGarbage) {
  const std::string inputs[] = {"", "fusor-rules", "fusor-rules 1\nrule", "\xff\xfe\x00garbage{{{",
                                "fusor-rules 1\nrule a match { y = ((((((((((x }", "fusor-rules 1\n\"unterminated",
                                "fusor-rules 99999999999999999999999\n"};
  for (const auto& t : inputs) {
    Diagnostics d;
    EXPECT_NO_THROW(load_rules_from_text("g.rules", t, {}, d));
    EXPECT_TRUE(d.has_errors()) << "no error for: " << t;
  }
}

class ImportTree : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fusor_dsl_imports_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "sub");
    write("main.rules", "fusor-rules 1\nimport \"sub/a.rules\"\nimport \"common.rules\"\nrule m match { y = Relu(x) } rewrite { y = x }\n");
    write("sub/a.rules", "fusor-rules 1\nimport \"../common.rules\"\nrule a match { y = Sigmoid(x) } rewrite { y = x }\n");
    write("common.rules", "fusor-rules 1\npattern act(x) { y = Tanh(x) }\nrule c match { y = act(x) } rewrite { y = x }\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  fs::path dir_;
};

TEST_F(ImportTree, ImportsResolveRelativeAndLoadOnceInOrder) {
  Diagnostics d;
  RuleSet rs = load_rules({(dir_ / "main.rules").string()}, {}, d);
  EXPECT_TRUE(d.empty()) << d.str();
  ASSERT_EQ(rs.files.size(), 3u);
  EXPECT_EQ(fs::path(rs.files[0]->path).filename(), "common.rules");
  EXPECT_EQ(fs::path(rs.files[1]->path).filename(), "a.rules");
  EXPECT_EQ(fs::path(rs.files[2]->path).filename(), "main.rules");
  ASSERT_EQ(rs.rules.size(), 3u);
  EXPECT_EQ(rs.rules[0]->name, "c");
  EXPECT_EQ(rs.rules[2]->name, "m");
  ASSERT_NE(rs.find_pattern("act"), nullptr);
  const auto* call = rs.rules[0]->match[0].value->dyn<CallExpr>();
  EXPECT_EQ(call->call_kind, CallKind::Pattern);
  EXPECT_EQ(call->pattern, rs.find_pattern("act"));
}

TEST_F(ImportTree, MissingTopLevelFile) {
  Diagnostics d;
  load_rules({(dir_ / "nope.rules").string()}, {}, d);
  EXPECT_EQ(d.str(), (dir_ / "nope.rules").string() + ": error: cannot open rules file '" + (dir_ / "nope.rules").string() +
                         "': No such file or directory\n");
}

TEST(Catalog, NewestOpsetAndFusorOps) {
  EXPECT_EQ(OpCatalog::newest_onnx_opset(), 17);
  OpCatalog cat;
  auto conv = cat.find("", "Conv");
  ASSERT_EQ(conv.status, OpLookup::Found);
  EXPECT_EQ(conv.op->min_inputs, 2);
  EXPECT_EQ(conv.op->max_inputs, 3);
  ASSERT_NE(conv.op->attr("strides"), nullptr);
  EXPECT_EQ(conv.op->attr("strides")->type, AttrType::Ints);
  EXPECT_EQ(conv.op->attr("group")->default_text, "1");
  EXPECT_TRUE(cat.find("", "Add").op->commutative);
  EXPECT_FALSE(cat.find("", "Sub").op->commutative);
  EXPECT_EQ(cat.find("", "LayerNormalization", 16).status, OpLookup::NotYet);
  EXPECT_EQ(cat.find("", "LayerNormalization", 16).first_version, 17);
  EXPECT_EQ(cat.find("", "Upsample").status, OpLookup::Deprecated);
  EXPECT_EQ(cat.find("com.nowhere", "X").status, OpLookup::UnknownDomain);
  EXPECT_EQ(cat.suggest("", "Conv2"), "Conv");
  // Clip's min/max are attributes for the rules (normalized from inputs), never copied by spreads.
  const AttrInfo* mn = cat.find("", "Clip").op->attr("min");
  ASSERT_NE(mn, nullptr);
  EXPECT_TRUE(mn->normalized);

  // The fusor table: every op the fusions issue needs, with sane signatures.
  for (const char* name : {"FusedConv", "FusedGemm", "FusedMatMul", "Gelu", "LayerNorm", "RMSNorm", "SkipLayerNorm",
                           "BiasGelu", "QuickGelu", "Attention", "Silu"}) {
    const OpInfo* op = find_fusor_op(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_EQ(op->domain, "fusor");
    EXPECT_GE(op->min_inputs, 1) << name;
    EXPECT_GE(op->max_outputs, 1) << name;
    for (const auto& in : op->inputs) EXPECT_TRUE(op->constraints.count(in.type_str)) << name << " " << in.name;
  }
  const OpInfo* fc = find_fusor_op("FusedConv");
  EXPECT_EQ(fc->min_inputs, 2);
  EXPECT_EQ(fc->max_inputs, 4);
  // FusedConv takes every attribute of Conv (so `<...c>` from a Conv is always valid).
  for (const auto& a : conv.op->attrs) {
    const AttrInfo* f = fc->attr(a.name);
    ASSERT_NE(f, nullptr) << a.name;
    EXPECT_EQ(f->type, a.type) << a.name;
  }
  EXPECT_EQ(fc->attr("activation_params")->type, AttrType::Floats);
  EXPECT_EQ(find_fusor_op("NhwcMaxPool")->attr("kernel_shape")->required, true);
}

}  // namespace

namespace {

TEST(Select, LevelProviderAndPriority) {
  Diagnostics d;
  RuleSet rs = load_rules_from_text("s.rules",
                                    "fusor-rules 1\n"
                                    "pattern two(x) { y = Relu(Sigmoid(x)) }\n"
                                    "rule one_node level basic match { y = Identity(x) } rewrite { y = x }\n"
                                    "rule three_nodes level extended match { y = Relu(Add(Mul(x, w), b)) } rewrite { y = x }\n"
                                    "rule via_pattern level basic match { y = Tanh(two(x)) } rewrite { y = x }\n"
                                    "rule only_xnn level layout providers xnnpack match { y = Relu(x) } rewrite { y = x }\n"
                                    "rule boosted level all benefit 100 match { y = Neg(x) } rewrite { y = x }\n",
                                    {}, d);
  ASSERT_FALSE(d.has_errors()) << d.str();
  EXPECT_EQ(default_benefit(*rs.find_rule("three_nodes")), 3);
  EXPECT_EQ(default_benefit(*rs.find_rule("via_pattern")), 3);
  auto names = [](const std::vector<const RuleDecl*>& v) {
    std::vector<std::string> n;
    for (auto* r : v) n.push_back(r->name);
    return n;
  };
  EXPECT_EQ(names(rs.select(fusor::OptLevel::Basic)), (std::vector<std::string>{"via_pattern", "one_node"}));
  EXPECT_EQ(names(rs.select(fusor::OptLevel::Extended)), (std::vector<std::string>{"three_nodes", "via_pattern", "one_node"}));
  EXPECT_EQ(names(rs.select(fusor::OptLevel::All, "cpu")),
            (std::vector<std::string>{"boosted", "three_nodes", "via_pattern", "one_node"}));
  EXPECT_EQ(names(rs.select(fusor::OptLevel::Layout, "xnnpack")),
            (std::vector<std::string>{"three_nodes", "via_pattern", "one_node", "only_xnn"}));
}

}  // namespace

namespace {

// Nesting is bounded so that a hostile file cannot exhaust the stack.
TEST(Loader, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(300000, '(') + "a" + std::string(300000, ')');
  Diagnostics d;
  load_rules_from_text("deep.rules", "fusor-rules 1\nrule r match { y = Relu(x) }\nwhere { " + deep + " } rewrite { y = x }\n", {}, d);
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_EQ(d.all()[0].loc.str(), "deep.rules:3:264");
  EXPECT_EQ(d.all()[0].message, "nesting deeper than 256 levels");
  Diagnostics d2;
  load_rules_from_text("bang.rules", "fusor-rules 1\nrule r match { y = Relu(x) } where { " + std::string(5000, '!') + "a } rewrite { y = x }\n",
                       {}, d2);
  EXPECT_EQ(d2.error_count(), 1u);
  // Ordinary nesting, comments and strings do not count.
  Diagnostics d3;
  load_rules_from_text("ok.rules", "fusor-rules 1\n# " + std::string(1000, '(') + "\nrule r match { y = Relu(x) } where { ((((rank(x)))) == 4) } rewrite { y = x }\n", {}, d3);
  EXPECT_TRUE(d3.empty()) << d3.str();
}

}  // namespace

namespace {

TEST(Loader, TooManyErrorsAreCapped) {
  std::string text = "fusor-rules 1\n";
  for (int i = 0; i < 500; ++i) text += "rule r" + std::to_string(i) + " match { y = Nope(x) } rewrite { y = x }\n";
  Diagnostics d;
  load_rules_from_text("many.rules", text, {}, d);
  EXPECT_EQ(d.error_count(), 500u);
  ASSERT_EQ(d.all().size(), Diagnostics::kMaxShownErrors + 1);
  EXPECT_EQ(d.all().back().message, "too many errors (more than 100); the rest are not shown");
  EXPECT_EQ(d.format(d.all().back()), "many.rules: error: too many errors (more than 100); the rest are not shown\n");
}

}  // namespace
