#include "dsl/provider_check.h"

#include <filesystem>
#include <map>

#include "dsl/builtins.h"
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
      if (!parse_level(r.level_text))
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
      ExprType t = type(*k.where, op);
      if (t.kind != Kind::Bool && t.kind != Kind::Unknown)
        diags_.error(k.where->loc, "a kernel condition must be true or false, got " + t.str());
    }
  }

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

  static bool comparable(const ExprType& a, const ExprType& b) {
    if (a.kind == Kind::Unknown || b.kind == Kind::Unknown) return true;
    if (a.is_number() && b.is_number()) return true;
    auto textish = [](Kind k) { return k == Kind::Op || k == Kind::String; };
    return (textish(a.kind) && textish(b.kind)) || a.kind == b.kind;
  }

  // Kernel conditions see the node's attributes by name, `input_dtype` and `input_rank` (of
  // the first input), literals, and op and element-type names.
  ExprType type(AstExpr& e, const OpInfo* op) {
    switch (e.kind) {
      case ExprKind::Int: return ExprType::of(Kind::Int);
      case ExprKind::Float: return ExprType::of(Kind::Float);
      case ExprKind::String: return ExprType::of(Kind::String);
      case ExprKind::List: {
        ExprType t = ExprType::of(Kind::List);
        bool first = true;
        for (auto& el : e.dyn<ListExpr>()->elements) {
          Kind k = type(*el, op).kind;
          t.elem = first ? k : (t.elem == k ? k : Kind::Unknown);
          first = false;
        }
        return t;
      }
      case ExprKind::Name: {
        const std::string& n = e.dyn<NameExpr>()->name;
        if (op) {
          if (const AttrInfo* a = op->attr(n)) return attr_type(a->type);
        }
        if (n == "input_dtype") return ExprType::of(Kind::DType);
        if (n == "input_rank") return ExprType::of(Kind::Int);
        if (dtype_from_rule_name(n) != DataType::Undefined) return ExprType::of(Kind::DType);
        if (catalog_.find("", n).status != OpLookup::UnknownOp) return ExprType::of(Kind::Op);
        if (op) {
          std::vector<std::string> names = {"input_dtype", "input_rank"};
          for (const auto& a : op->attrs) names.push_back(a.name);
          diags_.error(e.loc, "unknown name " + quote(n) + ": not an attribute of " + op->qualified() +
                                  did_you_mean(n, names));
        }
        return ExprType::of(Kind::Unknown);
      }
      case ExprKind::AttrRead: {
        auto& a = *e.dyn<AttrReadExpr>();
        if (catalog_.known_domain(a.base)) {
          lookup(OpRef{a.loc, a.base, a.attr});
          return ExprType::of(Kind::Op);
        }
        diags_.error(e.loc, "kernel conditions name the node's attributes directly ('group', not 'x.group')");
        return ExprType::of(Kind::Unknown);
      }
      case ExprKind::Unary: {
        auto& u = *e.dyn<UnaryExpr>();
        ExprType t = type(*u.operand, op);
        if (u.op == UnaryOp::Not) {
          if (t.kind != Kind::Bool && t.kind != Kind::Unknown) diags_.error(u.operand->loc, "'!' needs a condition, got " + t.str());
          return ExprType::of(Kind::Bool);
        }
        return t;
      }
      case ExprKind::Binary: {
        auto& b = *e.dyn<BinaryExpr>();
        ExprType l = type(*b.lhs, op), r = type(*b.rhs, op);
        const std::string sp = quote(binary_op_spelling(b.op));
        switch (b.op) {
          case BinaryOp::And:
          case BinaryOp::Or:
            for (auto [side, t] : {std::pair{b.lhs.get(), l}, std::pair{b.rhs.get(), r}})
              if (t.kind != Kind::Bool && t.kind != Kind::Unknown)
                diags_.error(side->loc, sp + " needs conditions on both sides, got " + t.str());
            return ExprType::of(Kind::Bool);
          case BinaryOp::In:
            if (r.kind != Kind::List && r.kind != Kind::Unknown) diags_.error(b.rhs->loc, "'in' needs a list on its right, got " + r.str());
            else if (r.kind == Kind::List && !comparable(l, ExprType::of(r.elem)))
              diags_.error(b.loc, "cannot look for " + l.str() + " in a " + r.str());
            return ExprType::of(Kind::Bool);
          case BinaryOp::Eq:
          case BinaryOp::Ne:
            if (!comparable(l, r)) diags_.error(b.loc, "cannot compare " + l.str() + " with " + r.str());
            return ExprType::of(Kind::Bool);
          case BinaryOp::Lt:
          case BinaryOp::Le:
          case BinaryOp::Gt:
          case BinaryOp::Ge:
            if (!l.is_number() || !r.is_number()) diags_.error(b.loc, sp + " compares numbers, got " + l.str() + " and " + r.str());
            return ExprType::of(Kind::Bool);
          default:
            if (!l.is_number() || !r.is_number()) diags_.error(b.loc, sp + " needs numbers, got " + l.str() + " and " + r.str());
            return ExprType::of(l.kind == Kind::Float || r.kind == Kind::Float ? Kind::Float : Kind::Int);
        }
      }
      case ExprKind::Index: {
        auto& ix = *e.dyn<IndexExpr>();
        ExprType b = type(*ix.base, op);
        type(*ix.index, op);
        if (b.kind != Kind::List && b.kind != Kind::Unknown) diags_.error(ix.base->loc, "only lists can be indexed, got " + b.str());
        return ExprType::of(b.kind == Kind::List ? b.elem : Kind::Unknown);
      }
      default:
        diags_.error(e.loc, "a kernel condition uses the node's attributes, input_dtype, input_rank, literals and "
                            "comparisons only");
        return ExprType::of(Kind::Unknown);
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
