// Parse tree -> typed AST. The grammar guarantees the tree's shape; what it cannot check
// (integer range, level names are left to sema) is reported to Diagnostics here.
#pragma once
#include <memory>
#include <string>

#include "dsl/ast.h"
#include "dsl/diagnostics.h"
#include "dsl/parse_tree.h"

namespace fusor::dsl {

class AstBuilder {
 public:
  AstBuilder(std::string file, Diagnostics& diags) : file_(std::move(file)), diags_(diags) {}

  // One top-level item (rule, pattern or import) into `out`.
  void add_top_item(const pt::node& n, RuleFile& out);
  // The version number of a `fusor-rules N` line.
  int version(const pt::node& version_line);
  // Pieces the provider parser shares.
  SourceLoc loc(const pt::node& n) const;
  ExprPtr expr(const pt::node& n);
  std::string string_value(const pt::node& string_lit);

 private:
  std::unique_ptr<RuleDecl> rule(const pt::node& n);
  std::unique_ptr<PatternDecl> pattern(const pt::node& n);
  ImportDecl import(const pt::node& n);
  std::vector<Statement> statements(const pt::node& block, size_t first_child);
  Statement statement(const pt::node& n);
  TestBlock test(const pt::node& n);
  ExprPtr binary_chain(const pt::node& n);
  ExprPtr call(const pt::node& n);
  ExprPtr postfix(const pt::node& n);
  int64_t integer(const pt::node& n);

  std::string file_;
  Diagnostics& diags_;
};

}  // namespace fusor::dsl
