// Prints the AST back as rule-language text (canonical spacing, full parentheses only where
// precedence needs them). Used by tools that show a rule (`fusor rules list`, `explain`) and by
// the round-trip tests: print(parse(text)) parses to the same AST.
#pragma once
#include <string>

#include "dsl/ast.h"

namespace fusor::dsl {

std::string print_expr(const AstExpr& e);
std::string print_statement(const Statement& s);
std::string print_rule(const RuleDecl& r);
std::string print_pattern(const PatternDecl& p);
// A whole file: version line, imports, patterns, rules.
std::string print_file(const RuleFile& f);

}  // namespace fusor::dsl
