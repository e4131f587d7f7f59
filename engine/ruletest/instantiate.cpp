#include "engine/ruletest/instantiate.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "dsl/op_catalog.h"
#include "engine/rewrite/graph_util.h"
#include "engine/rewrite/infer.h"
#include "core/ops/fusor_ops.h"
#include "engine/rewrite/normalize.h"
#include "engine/ruletest/test_values.h"

namespace fusor::ruletest {

namespace {

// A number or a list of numbers as written in a rule or test.
struct Lit {
  bool ok = false;
  bool is_list = false;
  bool is_int = true;
  std::vector<double> values;
};

Lit literal(const dsl::AstExpr& e) {
  Lit l;
  if (auto* i = e.dyn<dsl::IntExpr>()) {
    l.ok = true;
    l.values = {static_cast<double>(i->value)};
  } else if (auto* f = e.dyn<dsl::FloatExpr>()) {
    l.ok = true;
    l.is_int = false;
    l.values = {f->value};
  } else if (auto* u = e.dyn<dsl::UnaryExpr>(); u && u->op == dsl::UnaryOp::Neg) {
    l = literal(*u->operand);
    if (l.is_list) l.ok = false;
    for (double& v : l.values) v = -v;
  } else if (auto* list = e.dyn<dsl::ListExpr>()) {
    l.ok = true;
    l.is_list = true;
    for (const auto& el : list->elements) {
      Lit x = literal(*el);
      if (!x.ok || x.is_list) return Lit{};
      l.is_int = l.is_int && x.is_int;
      l.values.push_back(x.values[0]);
    }
  }
  return l;
}

std::string where(const dsl::SourceLoc& loc) { return loc.file + ":" + std::to_string(loc.line); }

[[noreturn]] void fail(const dsl::SourceLoc& loc, const std::string& msg) {
  throw InstantiateError(where(loc) + ": " + msg);
}

// Names a match expression reads (captures and values of other statements), nested calls included.
void names_read(const dsl::AstExpr& e, std::set<std::string>& out) {
  if (auto* n = e.dyn<dsl::NameExpr>()) out.insert(n->name);
  if (auto* o = e.dyn<dsl::OptionalExpr>()) out.insert(o->name);
  if (auto* v = e.dyn<dsl::VariadicExpr>()) out.insert(v->name);
  if (auto* c = e.dyn<dsl::CallExpr>())
    for (const auto& a : c->args) names_read(*a, out);
}

// How one output of a call is created.
struct OutSpec {
  std::string key;         // the rule-level name (test attributes, `.op` choices); "" for none
  std::string graph_name;  // the value's name; "" for a fresh one
};

class Builder {
 public:
  Builder(const dsl::RuleDecl& r, const dsl::TestBlock& t, int opset, uint64_t seed)
      : rule_(r), test_(t), opset_(opset), seed_(seed), catalog_(opset), model_(std::make_unique<Model>()),
        g_(*model_->graph) {
    for (const auto& in : t.inputs) inputs_[in.name] = &in;
    for (const auto& a : t.attrs) {
      if (a.attr == "op") {
        if (auto* n = a.value->dyn<dsl::NameExpr>()) op_choice_[a.value_name] = n->name;
        if (auto* q = a.value->dyn<dsl::AttrReadExpr>()) op_choice_[a.value_name] = q->base + "." + q->attr;
      } else {
        attrs_[a.value_name].push_back(&a);
      }
    }
  }

  std::unique_ptr<Model> run() {
    model_->opsets = {{"", opset_}, {kFusorDomain, kFusorOpsetVersion}};
    g_.name = rule_.name + (test_.name.empty() ? "" : "." + test_.name);
    Scope top;
    top.is_top = true;
    for (const auto& s : rule_.match)
      for (const auto& o : s.outputs)
        if (o.name != "_") top.produced.insert(o.name);
    run_statements(rule_.match, top, nullptr);
    std::set<std::string> consumed;
    for (const auto& s : rule_.match) names_read(*s.value, consumed);
    for (const auto& s : rule_.match)
      for (const auto& o : s.outputs)
        if (o.name != "_" && !consumed.count(o.name)) add_sink(top.values.at(o.name), o.name);
    if (g_.outputs().empty()) fail(rule_.loc, "the match produces no value to compare");
    g_.verify();
    return std::move(model_);
  }

 private:
  struct Scope {
    bool is_top = false;
    std::string prefix;                     // patterns: "name." before local value names
    std::set<std::string> produced;         // names this scope's statements define
    std::map<std::string, ValueId> values;  // defined so far, and (patterns) the parameters
  };

  // Ops the match may contain (every alternative, every pattern body).
  void match_ops(const dsl::AstExpr& e, std::set<std::string>& out) const {
    auto* c = e.dyn<dsl::CallExpr>();
    if (!c) return;
    if (c->call_kind == dsl::CallKind::Op)
      for (const auto& r : c->ops) out.insert(r.qualified());
    if (c->call_kind == dsl::CallKind::Pattern && c->pattern)
      for (const auto& body : c->pattern->bodies)
        for (const auto& s : body) match_ops(*s.value, out);
    for (const auto& a : c->args) match_ops(*a, out);
  }

  // The graph output `name` is a sink node reading the matched value v (renamed "name.match"),
  // so the pattern sits inside a graph as in a model: a rewrite may then rename v's source,
  // which a graph input feeding a graph output would forbid. The sink is an op the rule does
  // not match and that takes v's type; it is the same in both graphs, so it does not change
  // the comparison.
  void add_sink(ValueId v, const std::string& name) {
    std::set<std::string> ops;
    for (const auto& s : rule_.match) match_ops(*s.value, ops);
    DataType dt = g_.value(v).type.elem;
    std::vector<const char*> candidates = {"Identity", "Neg", "Abs", "Cast", "Sign", "Softsign"};
    const char* pick = nullptr;
    for (const char* c : candidates) {
      if (ops.count(c)) continue;
      const dsl::OpInfo* info = catalog_.find("", c, opset_).op;
      if (info && !info->inputs.empty() && (info->types_of(info->inputs[0]) & dsl::type_bit(dt))) {
        pick = c;
        break;
      }
    }
    if (!pick) fail(rule_.loc, "no sink op for output '" + name + "' (the rule matches Identity, Neg, Abs, Cast, Sign and Softsign)");
    g_.rename_value(v, g_.unique_name(name + ".match"));
    ValueId out = g_.add_value(name, g_.value(v).type);
    std::vector<Attribute> attrs;
    if (std::string(pick) == "Cast") attrs.push_back(Attribute::make_int("to", static_cast<int64_t>(dt)));
    g_.add_node(OpType::onnx(pick), {v}, {out}, std::move(attrs), g_.unique_name(name + "_sink"));
    g_.add_output(out);
  }

  ValueId lookup(const std::string& name, Scope& sc, bool optional, const dsl::SourceLoc& loc) {
    auto it = sc.values.find(name);
    if (it != sc.values.end()) return it->second;
    if (!sc.is_top) {
      // An input local to a pattern body: the test cannot name it.
      if (optional) return kNoValue;
      fail(loc, "'" + name + "' is an input local to the pattern body; a test cannot give it (make it a parameter)");
    }
    ValueId v = capture(name, optional, loc);
    sc.values[name] = v;
    return v;
  }

  // A match input: typed by the test.
  ValueId capture(const std::string& name, bool optional, const dsl::SourceLoc& loc) {
    auto it = inputs_.find(name);
    if (it == inputs_.end()) {
      if (optional) return kNoValue;
      fail(test_.loc, "the test gives no type for input '" + name + "'");
    }
    const dsl::TestInput& in = *it->second;
    if (in.absent) return kNoValue;
    DataType dt = dsl::dtype_from_rule_name(in.dtype);
    if (dt == DataType::Undefined) fail(in.dtype_loc, "unknown element type '" + in.dtype + "'");
    Shape shape(in.dims.begin(), in.dims.end());
    if (!in.is_const) {
      ValueId v = g_.add_value(name, ValueType::tensor(dt, shape));
      g_.add_input(v);
      return v;
    }
    Tensor t;
    if (in.value) {
      Lit l = literal(*in.value);
      if (!l.ok) fail(in.value->loc, "a test value must be a number or a list of numbers");
      t = tensor_of_values(dt, shape, l.values);
      if (!t.defined())
        fail(in.value->loc, "'" + name + "' has " + std::to_string(shape_numel(shape)) + " element(s) but the test gives " +
                                std::to_string(l.values.size()) + " value(s) (give one, or one per element)");
    } else {
      RandomRange positive{0.5, 1.5, 1, 3};
      t = random_tensor(dt, shape, seed_, ++stream_, positive);
    }
    return g_.add_initializer(name, std::move(t));
  }

  // Runs statements whose inputs are ready until all ran. `result` (patterns): the outputs of
  // the last statement, which are the pattern's results. Returns the last statement's values.
  std::vector<ValueId> run_statements(const std::vector<dsl::Statement>& stmts, Scope& sc,
                                      const std::vector<OutSpec>* result) {
    std::vector<bool> done(stmts.size(), false);
    std::vector<ValueId> last;
    for (size_t left = stmts.size(); left > 0; --left) {
      size_t pick = stmts.size();
      for (size_t i = 0; i < stmts.size() && pick == stmts.size(); ++i) {
        if (done[i]) continue;
        std::set<std::string> reads;
        names_read(*stmts[i].value, reads);
        bool ready = std::all_of(reads.begin(), reads.end(),
                                 [&](const std::string& n) { return !sc.produced.count(n) || sc.values.count(n); });
        if (ready) pick = i;
      }
      if (pick == stmts.size()) fail(stmts.front().loc, "the match statements depend on each other in a cycle");
      done[pick] = true;
      const dsl::Statement& s = stmts[pick];
      auto* call = s.value->dyn<dsl::CallExpr>();
      if (!call) fail(s.loc, "a match statement must be a call");
      bool is_result = result && pick + 1 == stmts.size();
      std::vector<OutSpec> outs;
      for (size_t i = 0; i < s.outputs.size(); ++i) {
        const std::string& n = s.outputs[i].name;
        if (is_result) outs.push_back(i < result->size() ? (*result)[i] : OutSpec{});
        else if (n == "_") outs.push_back({});
        else if (sc.is_top) outs.push_back({n, n});
        else outs.push_back({"", sc.prefix + n});
      }
      std::vector<ValueId> vals = instantiate_call(*call, sc, outs);
      for (size_t i = 0; i < s.outputs.size() && i < vals.size(); ++i)
        if (s.outputs[i].name != "_") sc.values[s.outputs[i].name] = vals[i];
      if (pick + 1 == stmts.size()) last = vals;
    }
    return last;
  }

  std::string chosen_op(const std::vector<OutSpec>& outs) const {
    for (const OutSpec& o : outs) {
      auto it = op_choice_.find(o.key);
      if (!o.key.empty() && it != op_choice_.end()) return it->second;
    }
    return "";
  }

  std::vector<ValueId> instantiate_call(const dsl::CallExpr& c, Scope& sc, const std::vector<OutSpec>& outs) {
    if (c.call_kind == dsl::CallKind::Pattern) return inline_pattern(c, sc, outs);
    if (c.call_kind != dsl::CallKind::Op || c.ops.empty()) fail(c.loc, "only op and pattern calls can be instantiated");
    std::string chosen = chosen_op(outs);
    const dsl::OpRef* ref = &c.ops.front();
    for (const auto& r : c.ops)
      if (r.qualified() == chosen) ref = &r;
    return add_op_node(c, *ref, sc, outs);
  }

  std::vector<ValueId> inline_pattern(const dsl::CallExpr& c, Scope& sc, const std::vector<OutSpec>& outs) {
    const dsl::PatternDecl* p = c.pattern;
    if (!p || p->bodies.empty()) fail(c.loc, "pattern '" + c.callee() + "' has no body");
    std::string chosen = chosen_op(outs);
    size_t body = 0;
    for (size_t b = 0; b < p->bodies.size() && !chosen.empty(); ++b) {
      if (p->bodies[b].empty()) continue;
      auto* root = p->bodies[b].back().value->dyn<dsl::CallExpr>();
      if (root && std::any_of(root->ops.begin(), root->ops.end(), [&](const dsl::OpRef& r) { return r.qualified() == chosen; })) {
        body = b;
        break;
      }
    }
    Scope inner;
    inner.prefix = p->name + ".";
    for (size_t i = 0; i < p->params.size() && i < c.args.size(); ++i)
      inner.values[p->params[i].name] = arg_value(*c.args[i], sc);
    const auto& stmts = p->bodies[body];
    for (const auto& s : stmts)
      for (const auto& o : s.outputs)
        if (o.name != "_") inner.produced.insert(o.name);
    return run_statements(stmts, inner, &outs);
  }

  // A value argument (not a literal or wildcard).
  ValueId arg_value(const dsl::AstExpr& a, Scope& sc) {
    if (auto* n = a.dyn<dsl::NameExpr>()) return lookup(n->name, sc, false, a.loc);
    if (auto* o = a.dyn<dsl::OptionalExpr>()) return lookup(o->name, sc, true, a.loc);
    if (auto* v = a.dyn<dsl::VariadicExpr>()) return lookup(v->name, sc, false, a.loc);
    if (auto* c = a.dyn<dsl::CallExpr>()) {
      std::vector<ValueId> vals = instantiate_call(*c, sc, {OutSpec{}});
      return vals.empty() ? kNoValue : vals[0];
    }
    fail(a.loc, "a literal or '_' cannot be passed to a pattern in a test");
  }

  // The element type of a literal in input slot i (graph_util.h's rule: the slot's only type,
  // else a sibling's under the same constraint), else by the literal's kind.
  DataType literal_type(OpType op, size_t slot, const std::vector<ValueId>& ins, const Lit& l) const {
    std::vector<DataType> known;
    for (ValueId v : ins) known.push_back(v == kNoValue ? DataType::Undefined : g_.value(v).type.elem);
    return literal_dtype(op, opset_, slot, known, l.is_int ? DataType::Int64 : DataType::Float);
  }

  // Whether another input under slot's type constraint is 1-D (Slice's starts for its steps).
  bool sibling_is_1d(const dsl::OpInfo* info, size_t slot, const std::vector<ValueId>& ins) const {
    const dsl::FormalParam* f = info ? info->input_formal(slot) : nullptr;
    if (!f) return false;
    for (size_t j = 0; j < ins.size(); ++j) {
      const dsl::FormalParam* fj = info->input_formal(j);
      if (j != slot && ins[j] != kNoValue && fj && fj->type_str == f->type_str && g_.value(ins[j]).type.rank() == 1)
        return true;
    }
    return false;
  }

  bool integer_only(const dsl::OpInfo* info, size_t slot) const {
    if (!info) return false;
    const dsl::FormalParam* f = info->input_formal(slot);
    if (!f) return false;
    dsl::TypeSet set = info->types_of(*f);
    for (int t = 1; t < 32; ++t)
      if ((set & (1u << t)) && !dtype_is_integer(static_cast<DataType>(t))) return false;
    return set != 0;
  }

  std::optional<Attribute> make_attr(const std::string& name, const dsl::AstExpr& e, const dsl::OpInfo* info) const {
    const dsl::AttrInfo* ai = info ? info->attr(name) : nullptr;
    dsl::AttrType want = ai ? ai->type : dsl::AttrType::Other;
    Lit l = literal(e);
    if (l.ok && !l.is_list) {
      if (want == dsl::AttrType::Float || (!l.is_int && want != dsl::AttrType::Int))
        return Attribute::make_float(name, static_cast<float>(l.values[0]));
      if (want == dsl::AttrType::Ints) return Attribute::make_ints(name, {static_cast<int64_t>(l.values[0])});
      if (want == dsl::AttrType::Floats) return Attribute::make_floats(name, {static_cast<float>(l.values[0])});
      return Attribute::make_int(name, static_cast<int64_t>(l.values[0]));
    }
    if (l.ok) {
      if (want == dsl::AttrType::Floats || (!l.is_int && want != dsl::AttrType::Ints)) {
        std::vector<float> v(l.values.begin(), l.values.end());
        return Attribute::make_floats(name, v);
      }
      std::vector<int64_t> v;
      for (double d : l.values) v.push_back(static_cast<int64_t>(d));
      return Attribute::make_ints(name, v);
    }
    if (auto* s = e.dyn<dsl::StringExpr>()) return Attribute::make_string(name, s->value);
    if (auto* n = e.dyn<dsl::NameExpr>()) {
      DataType dt = dtype_from_name(n->name);
      if (dt == DataType::Undefined) dt = dsl::dtype_from_rule_name(n->name);
      if (dt != DataType::Undefined && want != dsl::AttrType::String)
        return Attribute::make_int(name, static_cast<int64_t>(dt));
      return Attribute::make_string(name, n->name);
    }
    if (auto* list = e.dyn<dsl::ListExpr>()) {
      std::vector<std::string> v;
      for (const auto& el : list->elements) {
        auto* s = el->dyn<dsl::StringExpr>();
        if (!s) return std::nullopt;
        v.push_back(s->value);
      }
      return Attribute::make_strings(name, v);
    }
    return std::nullopt;
  }

  ValueId constant(const std::string& base, Tensor t) { return g_.add_initializer(g_.unique_name(base), std::move(t)); }

  std::vector<ValueId> add_op_node(const dsl::CallExpr& c, const dsl::OpRef& ref, Scope& sc, const std::vector<OutSpec>& outs) {
    OpType op(canonical_domain(ref.domain), ref.name);
    const dsl::OpInfo* info = catalog_.find(ref.domain, ref.name, opset_).op;
    std::string base = !outs.empty() && !outs[0].graph_name.empty() ? outs[0].graph_name : ref.name;
    std::string node_name = g_.unique_name(base + "_node");

    std::vector<ValueId> ins(c.args.size(), kNoValue);
    for (size_t i = 0; i < c.args.size(); ++i) {
      const dsl::AstExpr& a = *c.args[i];
      if (a.dyn<dsl::WildcardExpr>() || literal(a).ok) continue;
      ins[i] = arg_value(a, sc);
    }
    std::vector<ValueId> scalar_literals;
    for (size_t i = 0; i < c.args.size(); ++i) {
      const dsl::AstExpr& a = *c.args[i];
      Lit l = literal(a);
      if (!l.ok) continue;
      DataType dt = literal_type(op, i, ins, l);
      Shape shape = l.is_list ? Shape{static_cast<int64_t>(l.values.size())} : Shape{};
      if (!l.is_list && integer_only(info, i) && sibling_is_1d(info, i, ins)) shape = {1};
      ins[i] = constant(base + "_literal", tensor_of_values(dt, shape, l.values));
      if (!l.is_list) scalar_literals.push_back(ins[i]);
    }
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (!c.args[i]->dyn<dsl::WildcardExpr>()) continue;
      if (lifted_input_attr(op, i)) continue;  // an attribute in the normal form; the test may set it
      ValueId first = ins.empty() ? kNoValue : ins[0];
      if (first == kNoValue || i == 0) fail(c.args[i]->loc, "cannot instantiate '_' here: the node has no first input to model it on");
      const ValueType& ft = g_.value(first).type;
      if (integer_only(info, i)) {
        auto shape = ft.static_shape();
        if (!shape) fail(c.args[i]->loc, "cannot instantiate '_': the shape of the node's first input is not known");
        std::vector<double> dims(shape->begin(), shape->end());
        Lit l{true, true, true, dims};
        DataType dt = literal_type(op, i, ins, l);
        ins[i] = constant(base + "_shape", tensor_of_values(dt, {static_cast<int64_t>(dims.size())}, dims));
        if (dims.empty()) fail(c.args[i]->loc, "cannot instantiate '_' from a scalar first input");
      } else {
        ValueId v = g_.add_value(g_.unique_name(base + "_any"), ft);
        g_.add_input(v);
        ins[i] = v;
      }
    }

    // Attributes: the match's literal constraints, then the test's (which win).
    std::vector<Attribute> attrs;
    auto put = [&](Attribute a) {
      for (auto& x : attrs)
        if (x.name == a.name) { x = std::move(a); return; }
      attrs.push_back(std::move(a));
    };
    for (const auto& item : c.attrs) {
      if (item.spread || !item.value) continue;
      if (auto a = make_attr(item.name, *item.value, info)) put(std::move(*a));
    }
    for (const OutSpec& o : outs) {
      auto it = attrs_.find(o.key);
      if (o.key.empty() || it == attrs_.end()) continue;
      for (const dsl::TestAttr* ta : it->second) {
        auto a = make_attr(ta->attr, *ta->value, info);
        if (!a) fail(ta->value->loc, "cannot turn this value into attribute '" + ta->attr + "'");
        put(std::move(*a));
      }
    }
    // Attributes this opset spells as inputs.
    for (size_t k = 0; k < attrs.size();) {
      std::optional<size_t> slot;
      for (size_t s = 1; s <= 2; ++s)
        if (lifted_input_attr(op, s) == attrs[k].name) slot = s;
      if (!slot || !lifted_as_input(op, attrs[k].name, opset_)) {
        ++k;
        continue;
      }
      Tensor t;
      if (attrs[k].kind == AttrKind::Ints) {
        std::vector<double> v(attrs[k].ints.begin(), attrs[k].ints.end());
        t = tensor_of_values(DataType::Int64, {static_cast<int64_t>(v.size())}, v);
      } else {
        double v = attrs[k].kind == AttrKind::Float ? attrs[k].f : static_cast<double>(attrs[k].i);
        DataType dt = !ins.empty() && ins[0] != kNoValue ? g_.value(ins[0]).type.elem : DataType::Float;
        t = tensor_of_values(dt, {}, {v});
      }
      if (ins.size() <= *slot) ins.resize(*slot + 1, kNoValue);
      ins[*slot] = constant(base + "_" + attrs[k].name, std::move(t));
      attrs.erase(attrs.begin() + static_cast<long>(k));
    }
    while (!ins.empty() && ins.back() == kNoValue) ins.pop_back();

    std::vector<ValueId> out_vals;
    for (const OutSpec& o : outs)
      out_vals.push_back(g_.add_value(g_.unique_name(o.graph_name.empty() ? base + "_out" : o.graph_name)));
    NodeId n = g_.add_node(op, ins, out_vals, std::move(attrs), node_name);
    g_.node(n).domain = std::string(op.domain());
    if (!infer_node_types(g_, n, opset_) && !scalar_literals.empty()) {
      // Some inputs (Slice's steps, Pad's value...) must be 1-D: retry with [1] for the numbers.
      for (ValueId v : scalar_literals) {
        Tensor t = g_.value(v).constant->reshaped({1});
        g_.value(v).constant = std::make_shared<const Tensor>(std::move(t));
        g_.value(v).type = ValueType::tensor(g_.value(v).constant->dtype(), {1});
      }
      scalar_literals.clear();
    }
    if (scalar_literals.empty() && !infer_node_types(g_, n, opset_)) {
      std::string types;
      for (ValueId v : g_.node(n).inputs)
        types += (types.empty() ? "" : ", ") + (v == kNoValue ? std::string("absent") : g_.value(v).name + ": " + g_.value(v).type.str());
      fail(c.loc, g_.node(n).describe() + ": ONNX type inference rejects the instantiated node (inputs " + types +
                      "); give the test other shapes, values or attributes");
    }
    for (ValueId v : out_vals)
      if (g_.value(v).type.elem == DataType::Undefined)
        fail(c.loc, g_.node(n).describe() + ": the type of output '" + g_.value(v).name + "' cannot be inferred");
    return out_vals;
  }

  const dsl::RuleDecl& rule_;
  const dsl::TestBlock& test_;
  int opset_;
  uint64_t seed_;
  uint64_t stream_ = 0;
  dsl::OpCatalog catalog_;
  std::unique_ptr<Model> model_;
  Graph& g_;
  std::map<std::string, const dsl::TestInput*> inputs_;
  std::map<std::string, std::vector<const dsl::TestAttr*>> attrs_;
  std::map<std::string, std::string> op_choice_;
};

}  // namespace

std::unique_ptr<Model> instantiate(const dsl::RuleDecl& rule, const dsl::TestBlock& test, int opset, uint64_t seed) {
  return Builder(rule, test, opset, seed).run();
}

}  // namespace fusor::ruletest
