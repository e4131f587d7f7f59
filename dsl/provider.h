// Provider definitions (`providers/NAME.provider`): a provider's preferred layout, the rule
// files it loads at each level, and the ops its kernels run (with attribute constraints).
// The format is in docs/rules-reference.md, "Providers".
//
// Like rule files, a definition with errors yields diagnostics (FILE:LINE:COL), not exceptions;
// the caller must not use a definition when diags.has_errors() (exit 2).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/pattern/kernel_table.h"
#include "dsl/ast.h"
#include "dsl/diagnostics.h"
#include "dsl/rules.h"

namespace fusor::dsl {

enum class Layout { NCHW, NHWC };
const char* layout_name(Layout l);

// `fusor.FusedConv where activation in [Relu, Clip]`: the provider runs the op when the
// condition (over the node's attributes) holds; no condition means every form.
struct KernelDecl {
  SourceLoc loc;
  OpRef op;
  ExprPtr where;  // null: no constraint
  // Set by the checks: `where` lowered to the one expression form (core/pattern/kernel_table.h).
  std::optional<Expr> condition;
};

// `rules extended: a.rules, b.rules`
struct ProviderRuleFiles {
  SourceLoc loc;
  OptLevel level = OptLevel::Basic;
  SourceLoc level_loc;
  std::string level_text;
  struct File {
    SourceLoc loc;
    std::string path;           // as written
    std::string resolved_path;  // relative to the provider file
  };
  std::vector<File> files;
};

struct ProviderDef {
  std::string path;  // the definition's file
  std::string name;  // its stem: providers/xnnpack.provider -> "xnnpack"
  int version = 0;
  Layout layout = Layout::NCHW;  // set by the checks from the `layout` line
  struct LayoutDecl {
    SourceLoc loc;
    std::string text;
  };
  std::vector<LayoutDecl> layout_decls;  // as written (the checks want exactly one)
  std::vector<ProviderRuleFiles> rules;
  std::vector<KernelDecl> kernels;
  bool has_errors = false;

  // The rule files the provider loads at `level`: those of every `rules L:` line with L at or
  // below `level` (levels are cumulative, as in ONNX Runtime), in file order, each once.
  std::vector<std::string> rule_files(OptLevel level) const;
  // The declarations for an op ("" or "fusor" domain); empty when the provider cannot run it.
  std::vector<const KernelDecl*> kernels_for(const std::string& domain, const std::string& name) const;
  // The kernel declarations lowered for the engine (a definition without errors).
  KernelTable kernel_table() const;
};

// Parses and checks a definition given as text; `path` names it and anchors its rule files.
std::unique_ptr<ProviderDef> parse_provider_text(const std::string& path, const std::string& text,
                                                 const CheckOptions& opts, Diagnostics& diags);
std::unique_ptr<ProviderDef> load_provider(const std::string& path, const CheckOptions& opts, Diagnostics& diags);

}  // namespace fusor::dsl
