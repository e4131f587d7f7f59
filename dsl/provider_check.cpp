#include "dsl/provider_check.h"

#include <filesystem>
#include <cctype>
#include <map>

#include "dsl/builtins.h"
#include "dsl/expr_check.h"
#include "dsl/lower_expr.h"
#include "dsl/op_catalog.h"
#include "dsl/suggest.h"

namespace fusor::dsl {
namespace {

std::string quote(const std::string& s) { return "'" + s + "'"; }

class ProviderChecker {
 public:
  ProviderChecker(ProviderDef& def, const CheckOptions& opts, Diagnostics& diags)
      : def_(def), diags_(diags), catalog_(opts.opset) {}

  void run() {
    check_layout();
    check_rules();
    check_kernels();
  }

 private:
  void check_layout() {
    if (def_.layout_decls.empty()) {
      diags_.error(SourceLoc{def_.path, 1, 1}, "the provider does not state its layout: add 'layout NCHW' or 'layout NHWC'");
      return;
    }
    const auto& first = def_.layout_decls.front();
    if (first.text == "NHWC") def_.layout = Layout::NHWC;
    for (size_t i = 0; i < def_.layout_decls.size(); ++i) {
      const auto& d = def_.layout_decls[i];
      if (d.text != "NHWC" && d.text != "NCHW")
        diags_.error(d.loc, "unknown layout " + quote(d.text) + "; expected NCHW or NHWC");
      if (i > 0) {
        diags_.error(d.loc, "the layout is stated twice");
        diags_.note(first.loc, "first stated here");
      }
    }
  }

  void check_rules() {
    for (const auto& r : def_.rules) {
      if (!parse_rule_level(r.level_text))
        diags_.error(r.level_loc, "unknown level " + quote(r.level_text) + "; expected basic, extended, layout or all" +
                                did_you_mean(r.level_text, {"basic", "extended", "layout", "all"}));
      for (const auto& f : r.files) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(f.resolved_path, ec))
          diags_.error(f.loc, "cannot find rule file " + quote(f.path) + " (looked for " + quote(f.resolved_path) + ")");
      }
    }
  }

  void check_kernels() {
    std::map<std::string, SourceLoc> unconstrained;
    for (auto& k : def_.kernels) {
      const OpInfo* op = lookup(k.op);
      if (!k.where) {
        auto [it, fresh] = unconstrained.emplace(k.op.qualified(), k.loc);
        if (!fresh) {
          diags_.error(k.loc, "kernel " + quote(k.op.qualified()) + " is declared twice");
          diags_.note(it->second, "first declared here");
        }
        continue;
      }
      const size_t errors = diags_.error_count();
      KernelScope scope(*this, op);
      ExprType t = ExprChecker(catalog_, diags_, scope).check(*k.where);
      if (t.kind != Kind::Bool && t.kind != Kind::Unknown)
        diags_.error(k.where->loc, "a kernel condition must be true or false, got " + t.str());
      if (diags_.error_count() != errors) continue;
      try {
        k.condition = lower_expr(*k.where, KernelVars(op));
      } catch (const LowerError& e) {
        diags_.error(e.loc, e.message);
      }
    }
  }

  // The names of a kernel condition: the node's attributes, `input_dtype` and `input_rank` (of
  // its first input); no values, so built-ins that read a tensor have nothing to read.
  class KernelScope : public ExprScope {
   public:
    KernelScope(ProviderChecker& c, const OpInfo* op) : c_(c), op_(op) {}
    std::optional<ExprType> name(const NameExpr& n) override {
      if (op_)
        if (const AttrInfo* a = op_->attr(n.name)) return attr_type(a->type);
      if (n.name == "input_dtype") return ExprType::of(Kind::DType);
      if (n.name == "input_rank") return ExprType::of(Kind::Int);
      return std::nullopt;
    }
    void unknown_name(const NameExpr& n) override {
      if (!op_) return;  // the unknown op is reported
      std::vector<std::string> names = {"input_dtype", "input_rank"};
      for (const auto& a : op_->attrs) names.push_back(a.name);
      c_.diags_.error(n.loc, "unknown name " + quote(n.name) + ": not an attribute of " + op_->qualified() +
                                 did_you_mean(n.name, names));
    }
    bool binds(const std::string&) const override { return false; }
    ExprType attr_read(const AttrReadExpr& a) override {
      c_.diags_.error(a.loc, "kernel conditions name the node's attributes directly ('group', not 'x.group')");
      return ExprType::of(Kind::Unknown);
    }
    std::optional<ExprType> call(CallExpr& c) override {
      const OpRef& f = c.ops.front();
      const bool builtin_like = c.ops.size() == 1 && f.domain.empty() && c.attrs.empty() && !f.name.empty() &&
                                (find_builtin(f.name) || std::islower(static_cast<unsigned char>(f.name[0])));
      if (builtin_like) {
        c.call_kind = CallKind::Builtin;
        return std::nullopt;
      }
      c_.diags_.error(c.loc, "a kernel condition uses the node's attributes, input_dtype, input_rank, literals, "
                             "comparisons and built-in functions of lists and numbers only");
      return ExprType::of(Kind::Unknown);
    }
    void value_argument(const CallExpr& c, const AstExpr& a) override {
      c_.diags_.error(a.loc, c.callee() + "() reads a tensor, and a kernel condition has none: the node's first input "
                                          "is input_dtype and input_rank");
    }
    void op_name(const OpRef& ref) override { c_.lookup(ref); }
    int opset() const override { return c_.catalog_.onnx_opset(); }

   private:
    ProviderChecker& c_;
    const OpInfo* op_;
  };

  // Lowering: attributes are read on the node (KernelTable::kNodeVar, its first output), input_*
  // of its first input (kInputVar).
  class KernelVars : public ExprVars {
   public:
    explicit KernelVars(const OpInfo* op) : op_(op) {}
    std::optional<Expr> name(const std::string& n) const override {
      if (op_ && op_->attr(n)) return Expr::attr(KernelTable::kNodeVar, n);
      if (n == "input_dtype") return Expr::of_var(Expr::Op::DType, KernelTable::kInputVar);
      if (n == "input_rank") return Expr::of_var(Expr::Op::Rank, KernelTable::kInputVar);
      return std::nullopt;
    }
    int attr_base(const std::string&) const override { return -1; }
    int value_var(const AstExpr& a) const override { throw LowerError{a.loc, "a kernel condition has no values"}; }

   private:
    const OpInfo* op_;
  };

  const OpInfo* lookup(const OpRef& ref) {
    OpLookupResult r = catalog_.find(ref.domain, ref.name);
    if (r.op) return r.op;
    std::string msg;
    switch (r.status) {
      case OpLookup::UnknownDomain: msg = "unknown op domain " + quote(ref.domain); break;
      case OpLookup::NotYet:
        msg = "op " + quote(ref.qualified()) + " does not exist at opset " + std::to_string(catalog_.onnx_opset());
        break;
      case OpLookup::Deprecated:
        msg = "op " + quote(ref.qualified()) + " is deprecated at opset " + std::to_string(catalog_.onnx_opset());
        break;
      default: {
        msg = "unknown op " + quote(ref.qualified());
        std::string near = catalog_.suggest(ref.domain, ref.name);
        if (!near.empty()) msg += "; did you mean " + quote(ref.domain.empty() ? near : ref.domain + "." + near) + "?";
      }
    }
    diags_.error(ref.loc, msg);
    return nullptr;
  }

  static ExprType attr_type(AttrType t) {
    switch (t) {
      case AttrType::Float: return ExprType::of(Kind::Float);
      case AttrType::Int: return ExprType::of(Kind::Int);
      case AttrType::String: return ExprType::of(Kind::String);
      case AttrType::Ints: return ExprType::of(Kind::List, Kind::Int);
      case AttrType::Floats: return ExprType::of(Kind::List, Kind::Float);
      case AttrType::Strings: return ExprType::of(Kind::List, Kind::String);
      default: return ExprType::of(Kind::Unknown);
    }
  }

  ProviderDef& def_;
  Diagnostics& diags_;
  OpCatalog catalog_;
};

}  // namespace

void check_provider(ProviderDef& def, const CheckOptions& opts, Diagnostics& diags) {
  ProviderChecker(def, opts, diags).run();
}

}  // namespace fusor::dsl
