#include "dsl/printer.h"

namespace fusor::dsl {
namespace {

int precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return 1;
    case BinaryOp::And: return 2;
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt: case BinaryOp::Le:
    case BinaryOp::Gt: case BinaryOp::Ge: case BinaryOp::In: return 3;
    case BinaryOp::Add: case BinaryOp::Sub: return 4;
    case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod: return 5;
  }
  return 0;
}
constexpr int kCoalesce = 6, kUnary = 7;

int precedence_of(const AstExpr& e) {
  if (auto* b = e.dyn<BinaryExpr>()) return precedence(b->op);
  if (e.dyn<CoalesceExpr>()) return kCoalesce;
  if (e.dyn<UnaryExpr>()) return kUnary;
  if (auto* i = e.dyn<IntExpr>()) return i->value < 0 ? kUnary : 8;
  if (auto* f = e.dyn<FloatExpr>()) return f->value < 0 || (!f->text.empty() && f->text[0] == '-') ? kUnary : 8;
  return 8;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    if (c == '\t') { out += "\\t"; continue; }
    out += c;
  }
  return out + "\"";
}

// `e` as an operand of an operator of precedence `p`; `right` when it is the right operand
// (left-associative operators need parentheses there at equal precedence).
std::string operand(const AstExpr& e, int p, bool right) {
  const int q = precedence_of(e);
  std::string s = print_expr(e);
  return (q < p || (right && q == p)) ? "(" + s + ")" : s;
}

template <typename List, typename F>
std::string join(const List& items, const char* sep, F f) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += f(items[i]);
  }
  return out;
}

std::string statements(const std::vector<Statement>& ss, const std::string& indent) {
  std::string out;
  for (const auto& s : ss) out += indent + print_statement(s) + "\n";
  return out;
}

}  // namespace

std::string print_expr(const AstExpr& e) {
  switch (e.kind) {
    case ExprKind::Name: return e.dyn<NameExpr>()->name;
    case ExprKind::Wildcard: return "_";
    case ExprKind::Optional: return e.dyn<OptionalExpr>()->name + "?";
    case ExprKind::Variadic: return e.dyn<VariadicExpr>()->name + "...";
    case ExprKind::Int: return std::to_string(e.dyn<IntExpr>()->value);
    case ExprKind::Float: return e.dyn<FloatExpr>()->text;
    case ExprKind::String: return quoted(e.dyn<StringExpr>()->value);
    case ExprKind::List:
    {
      std::string s = "[";  // appended, not "[" + ...: GCC 12 warns falsely (-Wrestrict) on that form
      s += join(e.dyn<ListExpr>()->elements, ", ", [](const ExprPtr& x) { return print_expr(*x); });
      return s += "]";
    }
    case ExprKind::Call: {
      const auto& c = *e.dyn<CallExpr>();
      std::string s = join(c.ops, " | ", [](const OpRef& o) { return o.qualified(); });
      if (!c.attrs.empty())
        s += " <" + join(c.attrs, ", ", [](const AttrItem& a) {
               return a.spread ? "..." + a.name : a.name + " = " + print_expr(*a.value);
             }) + ">";
      if (c.ops.size() > 1 || !c.attrs.empty()) s += " ";
      return s + "(" + join(c.args, ", ", [](const ExprPtr& x) { return print_expr(*x); }) + ")";
    }
    case ExprKind::AttrRead: {
      const auto& a = *e.dyn<AttrReadExpr>();
      return a.base + "." + a.attr;
    }
    case ExprKind::Index: {
      const auto& x = *e.dyn<IndexExpr>();
      return operand(*x.base, 8, false) + "[" + print_expr(*x.index) + "]";
    }
    case ExprKind::Unary: {
      const auto& u = *e.dyn<UnaryExpr>();
      return std::string(u.op == UnaryOp::Not ? "!" : "-") + operand(*u.operand, kUnary, false);
    }
    case ExprKind::Binary: {
      const auto& b = *e.dyn<BinaryExpr>();
      const int p = precedence(b.op);
      return operand(*b.lhs, p, false) + " " + binary_op_spelling(b.op) + " " + operand(*b.rhs, p, true);
    }
    case ExprKind::Coalesce: {
      const auto& c = *e.dyn<CoalesceExpr>();
      return operand(*c.value, kCoalesce, false) + " ?? " + operand(*c.fallback, kCoalesce, true);
    }
  }
  return "";
}

std::string print_statement(const Statement& s) {
  return join(s.outputs, ", ", [](const OutputName& o) { return o.name; }) + " = " + print_expr(*s.value);
}

std::string print_rule(const RuleDecl& r) {
  std::string out = "rule " + r.name + "\n";
  if (r.has_level) out += "  level " + r.level_text + "\n";
  if (!r.providers.empty()) out += "  providers " + join(r.providers, ", ", [](const NameRef& n) { return n.name; }) + "\n";
  if (r.benefit) out += "  benefit " + std::to_string(*r.benefit) + "\n";
  out += "  match {\n" + statements(r.match, "    ") + "  }\n";
  if (!r.where.empty())
    out += "  where {\n" + join(r.where, "", [](const ExprPtr& w) { return "    " + print_expr(*w) + "\n"; }) + "  }\n";
  out += "  rewrite {\n" + statements(r.rewrite, "    ") + "  }\n";
  for (const auto& t : r.tests) {
    out += "  test " + (t.name.empty() ? std::string() : t.name + " ") + "{\n";
    for (const auto& in : t.inputs) {
      out += "    " + in.name + ": ";
      if (in.absent) {
        out += "none\n";
        continue;
      }
      out += (in.is_const ? "const " : "") + in.dtype + "[" +
             join(in.dims, ", ", [](int64_t d) { return std::to_string(d); }) + "]";
      if (in.value) out += " = " + print_expr(*in.value);
      out += "\n";
    }
    for (const auto& a : t.attrs) out += "    " + a.value_name + "." + a.attr + " = " + print_expr(*a.value) + "\n";
    if (t.tolerance) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", *t.tolerance);
      std::string tol = buf;
      if (tol.find_first_of(".e") == std::string::npos) tol += ".0";
      out += "    tolerance " + tol + "\n";
    }
    out += "  }\n";
  }
  return out;
}

std::string print_pattern(const PatternDecl& p) {
  std::string out = "pattern " + p.name + "(" + join(p.params, ", ", [](const NameRef& n) { return n.name; }) + ") ";
  out += join(p.bodies, " | ", [](const std::vector<Statement>& body) { return "{\n" + statements(body, "  ") + "}"; });
  return out + "\n";
}

std::string print_file(const RuleFile& f) {
  std::string out = "fusor-rules " + std::to_string(f.version) + "\n";
  for (const auto& i : f.imports) out += "import " + quoted(i.path) + "\n";
  for (const auto& p : f.patterns) out.append("\n").append(print_pattern(*p));
  for (const auto& r : f.rules) out.append("\n").append(print_rule(*r));
  return out;
}

}  // namespace fusor::dsl
