// The public API of the rule language: load rule files (with their imports), check them, and
// hand the checked AST to the matcher compiler (engine/rewrite).
//
//   fusor::dsl::Diagnostics diags;
//   fusor::dsl::RuleSet rules = fusor::dsl::load_rules({"rules/basic.rules"}, {}, diags);
//   if (diags.has_errors()) { std::cerr << diags.str(); exit(2); }
//   for (const RuleDecl* r : rules.rules) ...
//
// Contract: load_rules never throws for bad input; every problem is a diagnostic. When
// diags.has_errors(), the RuleSet must not be applied (the design brief: nothing from a file
// with an error is applied, and the run fails with exit 2); it is still returned so tools can
// list what did parse.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/diagnostics.h"

namespace fusor::dsl {

struct CheckOptions {
  // The ONNX opset ops are checked at; 0 means the newest opset libonnx knows (17 here).
  // A rule guarded by `where { opset() >= N }` is checked at N when N is newer.
  int opset = 0;
};

struct RuleSet {
  int opset = 0;  // the opset the rules were checked at
  std::vector<std::unique_ptr<RuleFile>> files;  // load order: imports before importers
  std::vector<const RuleDecl*> rules;            // every rule in file order (RuleDecl::order)
  std::map<std::string, const PatternDecl*> patterns;

  const RuleDecl* find_rule(const std::string& name) const;
  const PatternDecl* find_pattern(const std::string& name) const;

  // The rules that run at optimization level `level` for `provider`, in priority order: a
  // rule's level is at or below `level` (basic < extended < layout < all), and its `providers`
  // clause, if any, names `provider` ("" matches every rule). Priority: larger benefit first
  // (the default benefit is the number of matched nodes), then file order, then name.
  std::vector<const RuleDecl*> select(OptLevel level, const std::string& provider = "") const;
};

// The default benefit of a rule: the number of op nodes its match names (nested calls
// included; a pattern call counts its first body's nodes).
int64_t default_benefit(const RuleDecl& r);

// Parses `files` and their imports, then checks them.
RuleSet load_rules(const std::vector<std::string>& files, const CheckOptions& opts, Diagnostics& diags);
// The same for one file given as text; `name` appears in diagnostics and anchors its imports.
RuleSet load_rules_from_text(const std::string& name, const std::string& text, const CheckOptions& opts,
                             Diagnostics& diags);

}  // namespace fusor::dsl
