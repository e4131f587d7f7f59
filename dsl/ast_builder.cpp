#include "dsl/ast_builder.h"

#include <charconv>
#include <cstdlib>

namespace fusor::dsl {
namespace g = grammar;

namespace {

BinaryOp binary_op(std::string_view s) {
  if (s == "||") return BinaryOp::Or;
  if (s == "&&") return BinaryOp::And;
  if (s == "==") return BinaryOp::Eq;
  if (s == "!=") return BinaryOp::Ne;
  if (s == "<") return BinaryOp::Lt;
  if (s == "<=") return BinaryOp::Le;
  if (s == ">") return BinaryOp::Gt;
  if (s == ">=") return BinaryOp::Ge;
  if (s == "in") return BinaryOp::In;
  if (s == "+") return BinaryOp::Add;
  if (s == "-") return BinaryOp::Sub;
  if (s == "*") return BinaryOp::Mul;
  if (s == "/") return BinaryOp::Div;
  return BinaryOp::Mod;
}

bool is_binary_chain(const pt::node& n) { return n.is_type<g::expr>() || n.is_type<g::arith_expr>(); }

// Binding strength of a binary operator node (larger binds tighter).
int precedence(const pt::node& op) {
  if (op.is_type<g::or_op>()) return 1;
  if (op.is_type<g::and_op>()) return 2;
  if (op.is_type<g::cmp_op>()) return 3;
  if (op.is_type<g::add_op>()) return 4;
  if (op.is_type<g::mul_op>()) return 5;
  return 6;  // ??
}

}  // namespace

SourceLoc AstBuilder::loc(const pt::node& n) const {
  return SourceLoc{file_, static_cast<uint32_t>(n.m_begin.line), static_cast<uint32_t>(n.m_begin.column)};
}

int64_t AstBuilder::integer(const pt::node& n) {
  std::string_view s = n.string_view();
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    diags_.error(loc(n), "integer literal '" + std::string(s) + "' is out of range (int64)");
    return 0;
  }
  return v;
}

std::string AstBuilder::string_value(const pt::node& n) {
  std::string_view s = n.string_view();
  s = s.substr(1, s.size() >= 2 ? s.size() - 2 : 0);  // the quotes
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    } else {
      out += s[i];
    }
  }
  return out;
}

int AstBuilder::version(const pt::node& n) { return static_cast<int>(integer(*n.children.at(0))); }

void AstBuilder::add_top_item(const pt::node& n, RuleFile& out) {
  if (n.is_type<g::rule_decl>()) {
    out.rules.push_back(rule(n));
  } else if (n.is_type<g::pattern_decl>()) {
    out.patterns.push_back(pattern(n));
  } else if (n.is_type<g::import_decl>()) {
    out.imports.push_back(import(n));
  }
}

ImportDecl AstBuilder::import(const pt::node& n) {
  ImportDecl d;
  d.loc = loc(n);
  d.path = string_value(*n.children.at(0));
  return d;
}

std::unique_ptr<RuleDecl> AstBuilder::rule(const pt::node& n) {
  auto r = std::make_unique<RuleDecl>();
  r->loc = loc(n);
  r->name = n.children.at(0)->string();
  for (size_t i = 1; i < n.children.size(); ++i) {
    const pt::node& c = *n.children[i];
    if (c.is_type<g::level_clause>()) {
      const pt::node& l = *c.children.at(0);
      r->has_level = true;
      r->level_loc = loc(l);
      r->level_text = l.string();
      r->level = parse_rule_level(r->level_text).value_or(OptLevel::Basic);
    } else if (c.is_type<g::providers_clause>()) {
      for (const auto& p : c.children) r->providers.push_back({loc(*p), p->string()});
    } else if (c.is_type<g::benefit_clause>()) {
      r->benefit_loc = loc(*c.children.at(0));
      r->benefit = integer(*c.children.at(0));
    } else if (c.is_type<g::match_block>()) {
      r->match = statements(c, 0);
    } else if (c.is_type<g::where_block>()) {
      for (const auto& e : c.children) r->where.push_back(expr(*e));
    } else if (c.is_type<g::rewrite_block>()) {
      r->rewrite = statements(c, 0);
    } else if (c.is_type<g::test_block>()) {
      r->tests.push_back(test(c));
    }
  }
  return r;
}

std::unique_ptr<PatternDecl> AstBuilder::pattern(const pt::node& n) {
  auto p = std::make_unique<PatternDecl>();
  p->loc = loc(n);
  p->name = n.children.at(0)->string();
  for (const auto& prm : n.children.at(1)->children) p->params.push_back({loc(*prm), prm->string()});
  for (size_t i = 2; i < n.children.size(); ++i) p->bodies.push_back(statements(*n.children[i], 0));
  return p;
}

std::vector<Statement> AstBuilder::statements(const pt::node& block, size_t first_child) {
  std::vector<Statement> out;
  for (size_t i = first_child; i < block.children.size(); ++i) out.push_back(statement(*block.children[i]));
  return out;
}

Statement AstBuilder::statement(const pt::node& n) {
  Statement s;
  s.loc = loc(n);
  for (const auto& o : n.children.at(0)->children) s.outputs.push_back({loc(*o), o->string()});
  s.value = expr(*n.children.at(1));
  return s;
}

TestBlock AstBuilder::test(const pt::node& n) {
  TestBlock t;
  t.loc = loc(n);
  for (const auto& cp : n.children) {
    const pt::node& c = *cp;
    if (c.is_type<g::name>()) {
      t.name = c.string();
    } else if (c.is_type<g::test_input>()) {
      TestInput in;
      in.loc = loc(c);
      in.name = c.children.at(0)->string();
      for (size_t i = 1; i < c.children.size(); ++i) {
        const pt::node& k = *c.children[i];
        if (k.is_type<g::absent_mark>()) {
          in.absent = true;
        } else if (k.is_type<g::const_mark>()) {
          in.is_const = true;
        } else if (k.is_type<g::dtype_name>()) {
          in.dtype_loc = loc(k);
          in.dtype = k.string();
        } else if (k.is_type<g::dims>()) {
          for (const auto& d : k.children) in.dims.push_back(integer(*d));
        } else if (k.is_type<g::test_value>()) {
          in.value = expr(*k.children.at(0));
        }
      }
      t.inputs.push_back(std::move(in));
    } else if (c.is_type<g::test_attr>()) {
      TestAttr a;
      a.loc = loc(c);
      a.value_name = c.children.at(0)->string();
      a.attr = c.children.at(1)->string();
      a.value = expr(*c.children.at(2));
      t.attrs.push_back(std::move(a));
    } else if (c.is_type<g::test_tolerance>()) {
      const pt::node& v = *c.children.at(0);
      t.tolerance_loc = loc(v);
      t.tolerance = std::strtod(v.string().c_str(), nullptr);
    }
  }
  return t;
}

// The grammar reads `a op b op c ...` flat; operator precedence is applied here (shunting
// yard, left-associative; comparisons do not chain).
ExprPtr AstBuilder::binary_chain(const pt::node& n) {
  std::vector<ExprPtr> operands;
  std::vector<const pt::node*> ops;
  auto reduce = [&] {
    const pt::node& op = *ops.back();
    ops.pop_back();
    ExprPtr rhs = std::move(operands.back());
    operands.pop_back();
    ExprPtr lhs = std::move(operands.back());
    operands.pop_back();
    if (op.is_type<g::coalesce_op>())
      operands.push_back(std::make_unique<CoalesceExpr>(loc(op), std::move(lhs), std::move(rhs)));
    else
      operands.push_back(std::make_unique<BinaryExpr>(loc(op), binary_op(op.string_view()), std::move(lhs), std::move(rhs)));
  };
  operands.push_back(expr(*n.children.at(0)));
  for (size_t i = 1; i + 1 < n.children.size(); i += 2) {
    const pt::node& op = *n.children[i];
    const int p = precedence(op);
    while (!ops.empty() && precedence(*ops.back()) >= p) {
      if (p == 3 && precedence(*ops.back()) == 3)
        diags_.error(loc(op), "comparisons cannot be chained; combine them with '&&'");
      reduce();
    }
    ops.push_back(&op);
    operands.push_back(expr(*n.children[i + 1]));
  }
  while (!ops.empty()) reduce();
  return std::move(operands.back());
}

ExprPtr AstBuilder::call(const pt::node& n) {
  auto c = std::make_unique<CallExpr>(loc(n));
  for (const auto& cp : n.children) {
    const pt::node& part = *cp;
    if (part.is_type<g::alternation>()) {
      for (const auto& on : part.children) {
        std::string full = on->string();
        OpRef ref;
        ref.loc = loc(*on);
        size_t dot = full.rfind('.');
        if (dot == std::string::npos) {
          ref.name = full;
        } else {
          ref.domain = full.substr(0, dot);
          ref.name = full.substr(dot + 1);
        }
        c->ops.push_back(std::move(ref));
      }
    } else if (part.is_type<g::attr_list>()) {
      for (const auto& ip : part.children) {
        AttrItem item;
        item.loc = loc(*ip);
        item.spread = ip->is_type<g::attr_spread>();
        item.name = ip->children.at(0)->string();
        if (!item.spread) item.value = expr(*ip->children.at(1));
        if (item.spread) item.loc = loc(*ip->children.at(0));
        c->attrs.push_back(std::move(item));
      }
    } else if (part.is_type<g::call_args>()) {
      for (const auto& a : part.children) c->args.push_back(expr(*a));
    }
  }
  return c;
}

ExprPtr AstBuilder::postfix(const pt::node& n) {
  ExprPtr base = expr(*n.children.at(0));
  for (size_t i = 1; i < n.children.size(); ++i) {
    const pt::node& s = *n.children[i];
    if (s.is_type<g::member_suffix>()) {
      const pt::node& member = *s.children.at(0);
      auto* nm = base->dyn<NameExpr>();
      if (!nm) {
        diags_.error(loc(s), "an attribute read needs a value name on the left: NAME." + member.string());
        continue;
      }
      base = std::make_unique<AttrReadExpr>(nm->loc, nm->name, loc(member), member.string());
    } else {
      base = std::make_unique<IndexExpr>(loc(s), std::move(base), expr(*s.children.at(0)));
    }
  }
  return base;
}

ExprPtr AstBuilder::expr(const pt::node& n) {
  if (n.is_type<g::int_lit>()) return std::make_unique<IntExpr>(loc(n), integer(n));
  if (n.is_type<g::float_lit>()) {
    std::string text = n.string();
    return std::make_unique<FloatExpr>(loc(n), std::strtod(text.c_str(), nullptr), text);
  }
  if (n.is_type<g::string_lit>()) return std::make_unique<StringExpr>(loc(n), string_value(n));
  if (n.is_type<g::name>()) return std::make_unique<NameExpr>(loc(n), n.string());
  if (n.is_type<g::wildcard>()) return std::make_unique<WildcardExpr>(loc(n));
  if (n.is_type<g::optional_arg>()) return std::make_unique<OptionalExpr>(loc(n), n.children.at(0)->string());
  if (n.is_type<g::variadic_arg>()) return std::make_unique<VariadicExpr>(loc(n), n.children.at(0)->string());
  if (n.is_type<g::list_lit>()) {
    auto l = std::make_unique<ListExpr>(loc(n));
    for (const auto& e : n.children) l->elements.push_back(expr(*e));
    return l;
  }
  if (n.is_type<g::call>()) return call(n);
  if (n.is_type<g::postfix_expr>()) return postfix(n);
  if (n.is_type<g::unary_expr>()) {
    const pt::node& op = *n.children.at(0);
    ExprPtr operand = expr(*n.children.at(1));
    if (op.is_type<g::neg_op>()) {
      // Fold negative literals, so `[-1, 1]` is a list of integer literals.
      if (auto* i = operand->dyn<IntExpr>()) return std::make_unique<IntExpr>(loc(op), -i->value);
      if (auto* f = operand->dyn<FloatExpr>()) return std::make_unique<FloatExpr>(loc(op), -f->value, "-" + f->text);
      return std::make_unique<UnaryExpr>(loc(op), UnaryOp::Neg, std::move(operand));
    }
    return std::make_unique<UnaryExpr>(loc(op), UnaryOp::Not, std::move(operand));
  }
  if (is_binary_chain(n)) return binary_chain(n);
  // The selector keeps nothing else; an unexpected node is a grammar/builder mismatch.
  diags_.error(loc(n), "internal error: unexpected syntax node '" + std::string(n.type) + "'");
  return std::make_unique<IntExpr>(loc(n), 0);
}

}  // namespace fusor::dsl
