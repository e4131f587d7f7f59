// Operator precedence and associativity of expressions (the grammar reads operator chains flat;
// the AST builder applies precedence).
#include <gtest/gtest.h>

#include "dsl/parser.h"

using namespace fusor::dsl;

namespace {

// Concatenation without `const char* + std::string&&` (GCC 12 warns falsely on it).
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (s.append(parts), ...);
  return s;
}

// An expression printed fully parenthesized.
std::string shape(const AstExpr& e) {
  if (auto* b = e.dyn<BinaryExpr>())
    return cat("(", shape(*b->lhs), " ", binary_op_spelling(b->op), " ", shape(*b->rhs), ")");
  if (auto* c = e.dyn<CoalesceExpr>()) return cat("(", shape(*c->value), " ?? ", shape(*c->fallback), ")");
  if (auto* u = e.dyn<UnaryExpr>()) return cat(u->op == UnaryOp::Not ? "!" : "-", shape(*u->operand));
  if (auto* n = e.dyn<NameExpr>()) return n->name;
  if (auto* i = e.dyn<IntExpr>()) return std::to_string(i->value);
  if (auto* f = e.dyn<FloatExpr>()) return f->text;
  if (auto* a = e.dyn<AttrReadExpr>()) return cat(a->base, ".", a->attr);
  if (auto* x = e.dyn<IndexExpr>()) return cat(shape(*x->base), "[", shape(*x->index), "]");
  std::string s;
  const std::vector<ExprPtr>* items = nullptr;
  if (auto* c = e.dyn<CallExpr>()) {
    s = cat(c->callee(), "(");
    items = &c->args;
  } else if (auto* l = e.dyn<ListExpr>()) {
    s = "[";
    items = &l->elements;
  } else {
    return "?";
  }
  for (size_t k = 0; k < items->size(); ++k) s.append(k ? ", " : "").append(shape(*(*items)[k]));
  return s.append(e.dyn<CallExpr>() ? ")" : "]");
}

std::string parse_where(const std::string& cond, Diagnostics& d) {
  auto f = parse_rule_text("e.rules", "fusor-rules 1\nrule r match { y = Relu(x) } where { " + cond + " } rewrite { y = x }\n", d);
  if (f->rules.empty() || f->rules[0]->where.empty()) return "<none>";
  std::string s;
  for (const auto& w : f->rules[0]->where) s.append(s.empty() ? "" : " ; ").append(shape(*w));
  return s;
}

std::string parse_where(const std::string& cond) {
  Diagnostics d;
  std::string s = parse_where(cond, d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  return s;
}

TEST(Expressions, Precedence) {
  EXPECT_EQ(parse_where("a || b && c"), "(a || (b && c))");
  EXPECT_EQ(parse_where("a && b || c"), "((a && b) || c)");
  EXPECT_EQ(parse_where("rank(x) == 4 && c.group == 1"), "((rank(x) == 4) && (c.group == 1))");
  EXPECT_EQ(parse_where("a + b * c == d - e / f % g"), "((a + (b * c)) == (d - ((e / f) % g)))");
  EXPECT_EQ(parse_where("a - b - c"), "((a - b) - c)");
  EXPECT_EQ(parse_where("a * b ?? c"), "(a * (b ?? c))");
  EXPECT_EQ(parse_where("!a && -b < 0"), "(!a && (-b < 0))");
  EXPECT_EQ(parse_where("shape(x)[1] % 8 == 0"), "((shape(x)[1] % 8) == 0)");
  EXPECT_EQ(parse_where("a.op in [Relu, Clip] || (a < b) == c"), "((a.op in [Relu, Clip]) || ((a < b) == c))");
  EXPECT_EQ(parse_where("[-1, 2.5, -3e-2]"), "[-1, 2.5, -3e-2]");
  EXPECT_EQ(parse_where("a == 1; b == 2 c"), "(a == 1) ; (b == 2) ; c");
}

TEST(Expressions, ComparisonsDoNotChain) {
  Diagnostics d;
  parse_where("a < b < c", d);
  EXPECT_EQ(d.str(),
            "e.rules:2:44: error: comparisons cannot be chained; combine them with '&&'\n"
            "rule r match { y = Relu(x) } where { a < b < c } rewrite { y = x }\n"
            "                                           ^\n");
}

TEST(Expressions, AttributeValuesStopAtComparisons) {
  Diagnostics d;
  auto f = parse_rule_text("a.rules",
                           "fusor-rules 1\nrule r match { y = Conv <group = 1 + 1, pads = [0, 0]> (x, w) } rewrite { y = x }\n", d);
  ASSERT_FALSE(d.has_errors()) << d.str();
  const auto* c = f->rules[0]->match[0].value->dyn<CallExpr>();
  ASSERT_EQ(c->attrs.size(), 2u);
  EXPECT_EQ(shape(*c->attrs[0].value), "(1 + 1)");
  EXPECT_EQ(c->args.size(), 2u);
}

}  // namespace
