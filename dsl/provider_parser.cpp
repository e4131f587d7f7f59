// Provider definitions: syntax (provider_grammar.h) into ProviderDef, then the checks of
// provider_check.cpp.
#include <algorithm>
#include <filesystem>

#include "dsl/ast_builder.h"
#include "dsl/grammar_errors.h"
#include "dsl/parse_tree.h"
#include "dsl/parse_util.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "dsl/provider.h"
#include "dsl/provider_check.h"

namespace fusor::dsl {
namespace p = tao::pegtl;
namespace pg = pgrammar;
namespace fs = std::filesystem;

namespace {

using Input = p::memory_input<p::tracking_mode::eager, p::eol::lf_crlf>;

template <typename Rule>
std::unique_ptr<pt::node> parse_tree_of(Input& in) {
  return pt::parse<Rule, tree_selector, p::nothing, p::must_if<grammar::errors>::control>(in);
}

SourceLoc loc_of(const std::string& path, const p::position& pos) {
  return SourceLoc{path, static_cast<uint32_t>(pos.line), static_cast<uint32_t>(pos.column)};
}

void add_item(const pt::node& n, AstBuilder& b, ProviderDef& def) {
  if (n.is_type<pg::layout_decl>()) {
    const pt::node& name = *n.children.at(0);
    def.layout_decls.push_back({b.loc(name), name.string()});
    return;
  }
  if (n.is_type<pg::rules_decl>()) {
    ProviderRuleFiles r;
    r.loc = b.loc(n);
    r.level_loc = b.loc(*n.children.at(0));
    r.level_text = n.children.at(0)->string();
    r.level = parse_rule_level(r.level_text).value_or(OptLevel::Basic);
    fs::path base = fs::path(def.path).parent_path();
    for (size_t i = 1; i < n.children.size(); ++i) {
      const pt::node& f = *n.children[i];
      ProviderRuleFiles::File file;
      file.loc = b.loc(f);
      file.path = f.is_type<grammar::string_lit>() ? b.string_value(f) : f.string();
      file.resolved_path = (base / file.path).lexically_normal().string();
      r.files.push_back(std::move(file));
    }
    def.rules.push_back(std::move(r));
    return;
  }
  if (n.is_type<pg::kernels_decl>()) {
    for (const auto& kp : n.children) {
      const pt::node& k = *kp;
      KernelDecl d;
      d.loc = b.loc(k);
      std::string full = k.children.at(0)->string();
      d.op.loc = d.loc;
      size_t dot = full.rfind('.');
      if (dot == std::string::npos) {
        d.op.name = full;
      } else {
        d.op.domain = full.substr(0, dot);
        d.op.name = full.substr(dot + 1);
      }
      if (k.children.size() > 1) d.where = b.expr(*k.children[1]);
      def.kernels.push_back(std::move(d));
    }
  }
}

}  // namespace

const char* layout_name(Layout l) { return l == Layout::NHWC ? "NHWC" : "NCHW"; }

std::vector<std::string> ProviderDef::rule_files(OptLevel level) const {
  std::vector<std::string> out;
  for (const auto& r : rules) {
    if (static_cast<int>(r.level) > static_cast<int>(level)) continue;
    for (const auto& f : r.files)
      if (std::find(out.begin(), out.end(), f.resolved_path) == out.end()) out.push_back(f.resolved_path);
  }
  return out;
}

std::vector<const KernelDecl*> ProviderDef::kernels_for(const std::string& domain, const std::string& name) const {
  std::vector<const KernelDecl*> out;
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (const auto& k : kernels)
    if (k.op.domain == d && k.op.name == name) out.push_back(&k);
  return out;
}

KernelTable ProviderDef::kernel_table() const {
  KernelTable t;
  t.provider = name;
  for (const KernelDecl& k : kernels) {
    KernelEntry e;
    e.op = OpType(canonical_domain(k.op.domain), k.op.name);
    e.when = k.condition;
    if (k.where) e.when_text = print_expr(*k.where);
    e.location = k.loc.file + ":" + std::to_string(k.loc.line);
    t.entries.push_back(std::move(e));
  }
  return t;
}

std::unique_ptr<ProviderDef> parse_provider_text(const std::string& path, const std::string& text,
                                                 const CheckOptions& opts, Diagnostics& diags) {
  diags.add_source(path, text);
  auto def = std::make_unique<ProviderDef>();
  def->path = path;
  def->name = fs::path(path).stem().string();
  const size_t errors_before = diags.error_count();
  if (size_t at = nesting_overflow(text); at != std::string::npos) {
    diags.error(position_of(path, text, at), "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
    def->has_errors = true;
    return def;
  }
  AstBuilder builder(path, diags);
  Input in(text.data(), text.data() + text.size(), path);

  p::parse<grammar::ws>(in);
  try {
    auto root = parse_tree_of<pg::provider_version>(in);
    if (root) {
      def->version = builder.version(*root->children.at(0));
      if (def->version != 1)
        diags.error(builder.loc(*root->children.at(0)->children.at(0)),
                    "unsupported provider format version " + std::to_string(def->version) +
                        "; this fusor reads version 1");
    } else {
      diags.error(loc_of(path, in.position()), "expected the version line 'fusor-provider 1' first");
    }
  } catch (const p::parse_error& e) {
    diags.error(loc_of(path, e.positions().front()), std::string(e.message()));
  }

  for (;;) {
    p::parse<grammar::ws>(in);
    if (in.empty()) break;
    const size_t item_start = static_cast<size_t>(in.current() - text.data());
    size_t error_at = 0;
    try {
      auto root = parse_tree_of<pg::provider_item>(in);
      if (root && !root->children.empty()) {
        add_item(*root->children.front(), builder, *def);
        continue;
      }
      diags.error(loc_of(path, in.position()), "expected 'layout', 'rules' or 'kernels'");
      error_at = item_start;
    } catch (const p::parse_error& e) {
      diags.error(loc_of(path, e.positions().front()), std::string(e.message()));
      error_at = e.positions().front().byte;
    }
    const size_t resume = recovery_point(text, item_start, error_at, {"layout", "rules", "kernels"});
    const size_t here = static_cast<size_t>(in.current() - text.data());
    if (resume <= here) break;
    in.bump(resume - here);
  }
  check_provider(*def, opts, diags);
  def->has_errors = diags.error_count() > errors_before;
  return def;
}

std::unique_ptr<ProviderDef> load_provider(const std::string& path, const CheckOptions& opts, Diagnostics& diags) {
  std::string text;
  std::string why;
  if (!read_text_file(path, text, &why)) {
    diags.error(SourceLoc{path}, "cannot open provider definition '" + path + "': " + why);
    auto def = std::make_unique<ProviderDef>();
    def->path = path;
    def->name = fs::path(path).stem().string();
    def->has_errors = true;
    return def;
  }
  return parse_provider_text(path, text, opts, diags);
}

}  // namespace fusor::dsl
