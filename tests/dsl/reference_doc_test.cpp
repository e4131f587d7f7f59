// docs/rules-reference.md documents every built-in function and every fusor op; this keeps the
// reference in step with the tables the checks use.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "dsl/builtins.h"
#include "dsl/fusor_ops.h"
#include "dsl/parser.h"
#include "dsl/provider.h"
#include "dsl/rules.h"

namespace {

std::string reference() {
  std::ifstream f(std::string(FUSOR_SOURCE_DIR) + "/docs/rules-reference.md");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ReferenceDoc, ListsEveryBuiltinAndFusorOp) {
  const std::string doc = reference();
  ASSERT_FALSE(doc.empty());
  for (const auto& b : fusor::dsl::builtins()) {
    std::string key = "`";  // built piecewise: GCC 12 warns falsely on "`" + std::string(...)
    key.append(b.name).append("(");
    EXPECT_NE(doc.find(key), std::string::npos) << "built-in " << b.name;
  }
  for (const auto& op : fusor::dsl::fusor_ops())
    EXPECT_NE(doc.find("`fusor." + op.name + "`"), std::string::npos) << "fusor op " << op.name;
}

}  // namespace

namespace {

// The complete examples of the reference (code blocks that start a file, a rule or a pattern)
// parse and check; the provider example has only its missing rule files to complain about.
TEST(ReferenceDoc, ExamplesParseAndCheck) {
  const std::string doc = reference();
  // Fenced blocks: an opening line "```" or "```lang", a closing line "```".
  std::vector<std::string> blocks;
  {
    std::istringstream in(doc);
    std::string line, cur;
    bool inside = false;
    while (std::getline(in, line)) {
      if (line.rfind("```", 0) == 0) {
        if (inside) blocks.push_back(cur);
        inside = !inside;
        cur.clear();
      } else if (inside) {
        cur += line + "\n";
      }
    }
    ASSERT_FALSE(inside) << "unclosed code block";
  }
  size_t rules_blocks = 0, provider_blocks = 0;
  for (const std::string& block : blocks) {
    if (block.rfind("fusor-provider 1", 0) == 0) {
      fusor::dsl::Diagnostics d;
      fusor::dsl::parse_provider_text("docs/example.provider", block, {}, d);
      for (const auto& diag : d.all()) {
        if (diag.severity == fusor::dsl::Severity::Error) {
          EXPECT_NE(diag.message.find("cannot find rule file"), std::string::npos) << d.format(diag);
        }
      }
      ++provider_blocks;
      continue;
    }
    std::string text;
    if (block.rfind("fusor-rules 1", 0) == 0) {
      // Syntax only: its import names a file that does not exist.
      fusor::dsl::Diagnostics d;
      fusor::dsl::parse_rule_text("docs/example.rules", block, d);
      EXPECT_FALSE(d.has_errors()) << d.str() << block;
      ++rules_blocks;
      continue;
    }
    if (block.rfind("rule ", 0) != 0 && block.rfind("pattern ", 0) != 0) continue;
    if (block.find("{ ... }") != std::string::npos) continue;  // an outline, not an example
    fusor::dsl::Diagnostics d;
    fusor::dsl::load_rules_from_text("docs/example.rules", "fusor-rules 1\n" + block, {}, d);
    EXPECT_TRUE(d.empty()) << d.str() << block;
    ++rules_blocks;
  }
  EXPECT_GE(rules_blocks, 3u);
  EXPECT_EQ(provider_blocks, 1u);
}

}  // namespace
