#include "engine/rewrite/explain.h"

#include <set>
#include <sstream>

#include "engine/rewrite/graph_util.h"
#include "engine/rewrite/predicate.h"

namespace fusor {

const char* explain_kind_name(ExplainKind k) {
  switch (k) {
    case ExplainKind::Applied: return "applied";
    case ExplainKind::NearMiss: return "near miss";
    case ExplainKind::Refused: return "refused";
    case ExplainKind::Skipped: return "skipped";
    case ExplainKind::Preempted: return "preempted";
  }
  return "?";
}

namespace {

using Op = Expr::Op;

// Binding strength, loosest first, as in the rule language (docs/rules-reference.md, section 8).
int precedence(Op op) {
  switch (op) {
    case Op::Or: return 1;
    case Op::And: return 2;
    case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::In: return 3;
    case Op::Add: case Op::Sub: return 4;
    case Op::Mul: case Op::Div: case Op::Mod: return 5;
    case Op::Neg: case Op::Not: return 6;
    default: return 7;
  }
}

const char* infix(Op op) {
  switch (op) {
    case Op::Or: return " || ";
    case Op::And: return " && ";
    case Op::Eq: return " == ";
    case Op::Ne: return " != ";
    case Op::Lt: return " < ";
    case Op::Le: return " <= ";
    case Op::Gt: return " > ";
    case Op::Ge: return " >= ";
    case Op::In: return " in ";
    case Op::Add: return " + ";
    case Op::Sub: return " - ";
    case Op::Mul: return " * ";
    case Op::Div: return " / ";
    case Op::Mod: return " % ";
    default: return nullptr;
  }
}

const char* call_name(Op op) {
  switch (op) {
    case Op::IsConst: return "const";
    case Op::Rank: return "rank";
    case Op::DType: return "dtype";
    case Op::Shape: return "shape";
    case Op::Uses: return "uses";
    case Op::Scalar: return "scalar";
    case Op::Opset: return "opset";
    case Op::Compose: return "compose";
    case Op::Iota: return "iota";
    case Op::Inverse: return "inverse";
    case Op::Len: return "len";
    case Op::Permute: return "permute";
    case Op::RemapAxes: return "remap_axes";
    case Op::Absent: return "absent";
    case Op::ValueOf: return "value";
    default: return nullptr;
  }
}

std::string var_text(int var, const Pattern& p) {
  if (var < 0 || var >= static_cast<int>(p.vars.size())) return "?";
  return p.vars[var].name.empty() ? "_t" + std::to_string(var) : p.vars[var].name;
}

std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// A constant of the rule itself: its value says nothing about the match.
bool is_literal(const Expr& e) {
  switch (e.op) {
    case Op::Number: case Op::Bool: case Op::String: case Op::OpName: case Op::DTypeName: return true;
    case Op::List:
      for (const Expr& k : e.kids)
        if (!is_literal(k)) return false;
      return true;
    default: return false;
  }
}

bool is_comparison(Op op) { return precedence(op) == 3; }

// The values the match gave to the sub-expressions of `e` (not its literals), outermost first:
// "shape(x)[1] % 8 = 4, shape(x)[1] = 12, shape(x) = [1, 12, 5, 5]".
void operands(const Expr& e, const Pattern& p, const Match& m, MatchEnv& env, std::vector<std::string>& out) {
  for (const Expr& k : e.kids) {
    if (is_literal(k) || k.op == Op::Var) continue;
    std::string item = expr_text(k, p) + " = " + eval_expr(k, p, m, env).repr();
    bool seen = false;
    for (const std::string& o : out) seen |= o == item;
    if (!seen) out.push_back(item);
    operands(k, p, m, env, out);
  }
  // A value a built-in reads directly (rank(x), shape(x)): name the graph value it is.
  if (e.var >= 0 && e.op != Op::Var && e.var < static_cast<int>(m.bound.size()) && m.bound[e.var] &&
      m.vars[e.var] != kNoValue) {
    std::string item = var_text(e.var, p) + " is '" + env.graph.value(m.vars[e.var]).name + "'";
    bool seen = false;
    for (const std::string& o : out) seen |= o == item;
    if (!seen) out.push_back(item);
  }
}

// pre + s + post, built by appending (GCC 12 warns falsely on `"(" + s + ")"`: -Wrestrict).
std::string wrap(const char* pre, const std::string& s, const char* post) {
  std::string out(pre);
  out.append(s).append(post);
  return out;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

}  // namespace

std::vector<ExplainRecord> merge_explain_runs(std::vector<ExplainRecord> first, std::vector<ExplainRecord> second,
                                              size_t first_steps, size_t first_rewrites) {
  std::set<std::pair<std::string, std::string>> again;
  for (ExplainRecord& e : second) {
    e.iteration += first_steps;
    if (e.rewrite_index) e.rewrite_index += first_rewrites;
    again.insert({e.graph, e.root});
  }
  std::vector<ExplainRecord> out;
  for (ExplainRecord& e : first)
    if (!again.count({e.graph, e.root})) out.push_back(std::move(e));
  for (ExplainRecord& e : second) out.push_back(std::move(e));
  return out;
}

std::string expr_text(const Expr& e, const Pattern& p) {
  auto kid = [&](size_t i, int parent, bool right) {
    const Expr& k = e.kids.at(i);
    std::string t = expr_text(k, p);
    int kp = precedence(k.op);
    // Parenthesize looser kids, and equally loose ones on the right (a - (b - c)).
    if (kp < parent || (right && kp == parent && infix(k.op))) return wrap("(", t, ")");
    return t;
  };
  auto args = [&] {
    std::string s;
    for (size_t i = 0; i < e.kids.size(); ++i) s += (i ? ", " : "") + expr_text(e.kids[i], p);
    return s;
  };
  switch (e.op) {
    case Op::Number: return number_text(e.number);
    case Op::Bool: return e.boolean ? "true" : "false";
    case Op::String: return wrap("\"", e.name, "\"");
    case Op::List: return wrap("[", args(), "]");
    case Op::OpName: return e.optype.qualified();
    case Op::DTypeName: return dtype_name(e.dtype);
    case Op::Var: return var_text(e.var, p);
    case Op::AttrRead: return var_text(e.var, p) + "." + e.name;
    case Op::OpOf: return var_text(e.var, p) + ".op";
    case Op::Index: return kid(0, 7, false) + "[" + expr_text(e.kids.at(1), p) + "]";
    case Op::Neg: return wrap("-", kid(0, 6, false), "");
    case Op::Not: return wrap("!", kid(0, 6, false), "");
    default: break;
  }
  if (const char* op = infix(e.op); op && e.kids.size() == 2)
    return kid(0, precedence(e.op), false) + op + kid(1, precedence(e.op), true);
  if (const char* name = call_name(e.op)) {
    // Built-ins of one value hold it in `var`; the others take their arguments as kids.
    if (e.kids.empty() && e.var >= 0) return wrap(name, wrap("(", var_text(e.var, p), ")"), "");
    return wrap(name, wrap("(", args(), ")"), "");
  }
  return "?";
}

std::string explain_predicate(const Expr& e, const Pattern& p, const Match& m, MatchEnv& env) {
  if (e.op == Op::And)
    for (const Expr& k : e.kids)
      if (!eval_predicate(k, p, m, env)) return explain_predicate(k, p, m, env);
  const std::string text = expr_text(e, p);
  PValue v = eval_expr(e, p, m, env);
  std::string verdict = v.kind == PValue::Kind::Unknown
                            ? " is unknown (it reads a symbolic or missing dimension, rank, type or attribute)"
                            : " is " + v.repr();
  switch (e.op) {
    case Op::Or: {
      std::vector<std::string> why;
      for (const Expr& k : e.kids) why.push_back(explain_predicate(k, p, m, env));
      return text + verdict + ": " + join(why, "; ");
    }
    case Op::IsConst: {
      std::vector<std::string> why;
      for (const Expr& k : e.kids) {
        int var = k.var;
        if (var < 0 || !m.bound[var]) {
          why.push_back(var_text(var, p) + " is not bound");
        } else if (m.vars[var] != kNoValue && !constant_of(env.graph, m.vars[var])) {
          const Value& val = env.graph.value(m.vars[var]);
          std::string from = val.is_graph_input ? "a graph input"
                             : val.producer != kNoNode ? "computed by " + env.graph.node(val.producer).describe()
                                                       : "not an initializer";
          why.push_back(var_text(var, p) + " ('" + val.name + "') is not constant: " + from);
        }
      }
      return text + verdict + ": " + join(why, "; ");
    }
    case Op::Not: return text + verdict + ": " + expr_text(e.kids.at(0), p) + " is " + eval_expr(e.kids.at(0), p, m, env).repr();
    default: break;
  }
  std::vector<std::string> ops;
  if (is_comparison(e.op) || !e.kids.empty() || e.var >= 0) operands(e, p, m, env, ops);
  return ops.empty() ? text + verdict : text + verdict + ": " + join(ops, ", ");
}

}  // namespace fusor
