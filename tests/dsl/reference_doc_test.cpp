// docs/rules-reference.md documents every built-in function and every fusor op; this keeps the
// reference in step with the tables the checks use.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "dsl/builtins.h"
#include "dsl/fusor_ops.h"

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
