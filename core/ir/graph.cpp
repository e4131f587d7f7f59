#include "core/ir/graph.h"

#include <algorithm>
#include <queue>

#include "core/util/error.h"

namespace fusor {

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Float: return "float";
    case AttrKind::Int: return "int";
    case AttrKind::String: return "string";
    case AttrKind::Tensor: return "tensor";
    case AttrKind::Graph: return "graph";
    case AttrKind::Floats: return "floats";
    case AttrKind::Ints: return "ints";
    case AttrKind::Strings: return "strings";
    case AttrKind::Tensors: return "tensors";
    case AttrKind::Graphs: return "graphs";
    case AttrKind::Opaque: return "opaque";
    case AttrKind::Undefined: return "undefined";
  }
  return "undefined";
}

// ---------------------------------------------------------------- ValueType

ValueType ValueType::tensor(DataType t, const Shape& s) {
  ValueType v;
  v.elem = t;
  v.has_shape = true;
  for (int64_t d : s) v.dims.push_back(Dim::known(d));
  return v;
}

std::optional<Shape> ValueType::static_shape() const {
  if (!has_shape) return std::nullopt;
  Shape s;
  for (const Dim& d : dims) {
    if (!d.is_known()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

ValueType ValueType::sequence(ValueType element) {
  ValueType v;
  v.kind = TypeKind::Sequence;
  v.element = std::make_shared<const ValueType>(std::move(element));
  return v;
}

ValueType ValueType::optional(ValueType element) {
  ValueType v;
  v.kind = TypeKind::Optional;
  v.element = std::make_shared<const ValueType>(std::move(element));
  return v;
}

bool ValueType::operator==(const ValueType& o) const {
  if (kind != o.kind || elem != o.elem || has_shape != o.has_shape || dims != o.dims || opaque != o.opaque) return false;
  if (!element || !o.element) return element == o.element;
  return *element == *o.element;
}

std::string ValueType::str() const {
  switch (kind) {
    case TypeKind::Sequence: return "seq(" + (element ? element->str() : std::string("?")) + ")";
    case TypeKind::Optional: return "optional(" + (element ? element->str() : std::string("?")) + ")";
    case TypeKind::Opaque: return "non-tensor";
    case TypeKind::Tensor: break;
  }
  std::string out = dtype_name(elem);
  if (!has_shape) return out + "[?]";
  out += '[';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ',';
    out += dims[i].is_known() ? std::to_string(dims[i].value) : (dims[i].param.empty() ? "?" : dims[i].param);
  }
  return out + ']';
}

// ---------------------------------------------------------------- Node

const Attribute* Node::attr(std::string_view n) const {
  for (const auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}
Attribute* Node::attr(std::string_view n) {
  for (auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}
int64_t Node::attr_int(std::string_view n, int64_t dflt) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::Int ? a->i : dflt;
}
float Node::attr_float(std::string_view n, float dflt) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::Float ? a->f : dflt;
}
std::string Node::attr_string(std::string_view n, const std::string& dflt) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::String ? a->s : dflt;
}
std::vector<int64_t> Node::attr_ints(std::string_view n, std::vector<int64_t> dflt) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::Ints ? a->ints : dflt;
}
std::vector<float> Node::attr_floats(std::string_view n, std::vector<float> dflt) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::Floats ? a->floats : dflt;
}
void Node::set_attr(Attribute a) {
  if (Attribute* cur = attr(a.name)) {
    *cur = std::move(a);
  } else {
    attrs.push_back(std::move(a));
  }
}
bool Node::remove_attr(std::string_view n) {
  auto it = std::find_if(attrs.begin(), attrs.end(), [&](const Attribute& a) { return a.name == n; });
  if (it == attrs.end()) return false;
  attrs.erase(it);
  return true;
}
int Node::num_present_inputs() const {
  int n = 0;
  for (ValueId v : inputs) n += v != kNoValue;
  return n;
}
std::string Node::describe() const { return "node '" + name + "' (" + op.qualified() + ")"; }

// ---------------------------------------------------------------- Graph: values

ValueId Graph::add_value(std::string name, ValueType type) {
  if (!name.empty() && by_name_.count(name))
    throw_bad_input("value name '" + name + "' is defined twice in graph '" + this->name + "'");
  auto v = std::make_unique<Value>();
  v->id = static_cast<ValueId>(values_.size());
  v->name = std::move(name);
  v->type = std::move(type);
  if (!v->name.empty()) by_name_.emplace(v->name, v->id);
  values_.push_back(std::move(v));
  return values_.back()->id;
}

ValueId Graph::find_value(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? kNoValue : it->second;
}

std::pair<const Graph*, ValueId> Graph::resolve(std::string_view name) const {
  for (const Graph* g = this; g; g = g->parent_) {
    ValueId v = g->find_value(name);
    if (v != kNoValue) return {g, v};
  }
  return {nullptr, kNoValue};
}

std::string Graph::unique_name(std::string_view base) {
  std::string b(base.empty() ? "v" : base);
  if (resolve(b).second == kNoValue) return b;
  for (;;) {
    std::string cand = b + "__" + std::to_string(++name_counter_);
    if (resolve(cand).second == kNoValue) return cand;
  }
}

void Graph::rename_value(ValueId id, std::string new_name) {
  Value& v = value(id);
  if (v.name == new_name) return;
  if (!new_name.empty() && by_name_.count(new_name))
    throw_internal("rename of '" + v.name + "' to existing name '" + new_name + "'");
  if (!v.name.empty()) by_name_.erase(v.name);
  v.name = std::move(new_name);
  if (!v.name.empty()) by_name_.emplace(v.name, id);
}

ValueId Graph::add_initializer(std::string name, Tensor t) {
  return add_initializer(std::move(name), std::make_shared<const Tensor>(std::move(t)));
}

ValueId Graph::add_initializer(std::string name, TensorPtr t) {
  ValueType type;
  if (t->dtype() == DataType::String) {
    type.elem = DataType::String;
    type.has_shape = true;
    for (int64_t d : t->shape()) type.dims.push_back(Dim::known(d));
  } else {
    type = ValueType::tensor(t->dtype(), t->shape());
  }
  ValueId id = add_value(std::move(name), std::move(type));
  value(id).constant = std::move(t);
  return id;
}

ValueId Graph::add_capture(std::string name, ValueId parent_value) {
  if (!parent_) throw_internal("capture in a graph without a parent");
  ValueId id = add_value(std::move(name), parent_->value(parent_value).type);
  value(id).captured_from = parent_value;
  return id;
}

void Graph::add_input(ValueId v) {
  value(v).is_graph_input = true;
  inputs_.push_back(v);
}

void Graph::add_output(ValueId v) {
  value(v).is_graph_output = true;
  outputs_.push_back(v);
}

void Graph::set_output(size_t i, ValueId v) {
  ValueId old = outputs_.at(i);
  outputs_[i] = v;
  value(v).is_graph_output = true;
  if (std::find(outputs_.begin(), outputs_.end(), old) == outputs_.end()) value(old).is_graph_output = false;
}

std::vector<ValueId> Graph::initializers() const {
  std::vector<ValueId> out;
  for (const auto& v : values_)
    if (v->alive && v->constant) out.push_back(v->id);
  return out;
}

std::vector<ValueId> Graph::captures() const {
  std::vector<ValueId> out;
  for (const auto& v : values_)
    if (v->alive && v->captured_from != kNoValue) out.push_back(v->id);
  return out;
}

void Graph::remove_value(ValueId id) {
  Value& v = value(id);
  if (!v.alive) return;
  if (!v.uses.empty() || v.is_graph_output || v.is_graph_input || v.producer != kNoNode)
    throw_internal("remove_value of '" + v.name + "', which is still in use");
  if (!v.name.empty()) by_name_.erase(v.name);
  v.alive = false;
  v.constant.reset();
}

// ---------------------------------------------------------------- Graph: nodes

void Graph::add_use(ValueId v, Use u) {
  auto& uses = value(v).uses;
  if (u.slot != kImplicitSlot) {
    Node& n = node(u.node);
    if (n.use_pos.size() < n.inputs.size()) n.use_pos.resize(n.inputs.size(), 0);
    n.use_pos[u.slot] = static_cast<uint32_t>(uses.size());
  }
  uses.push_back(u);
}

// A use list is a set kept in a vector: removal swaps the last use into the hole (O(1)), so
// its order is deterministic (it depends only on the sequence of edits) but not insertion order.
void Graph::drop_use(ValueId v, Use u) {
  auto& uses = value(v).uses;
  size_t pos = uses.size();
  if (u.slot != kImplicitSlot) {
    const Node& n = node(u.node);
    if (static_cast<size_t>(u.slot) < n.use_pos.size() && n.use_pos[u.slot] < uses.size() &&
        uses[n.use_pos[u.slot]] == u)
      pos = n.use_pos[u.slot];
  }
  if (pos == uses.size()) pos = static_cast<size_t>(std::find(uses.begin(), uses.end(), u) - uses.begin());
  if (pos == uses.size()) return;
  uses[pos] = uses.back();
  uses.pop_back();
  if (pos < uses.size() && uses[pos].slot != kImplicitSlot) node(uses[pos].node).use_pos[uses[pos].slot] = pos;
}

void Graph::link_before(NodeId n, NodeId before) {
  Node& nd = node(n);
  if (before == kNoNode) {
    nd.prev = tail_;
    nd.next = kNoNode;
    if (tail_ != kNoNode) node(tail_).next = n; else head_ = n;
    tail_ = n;
  } else {
    Node& b = node(before);
    nd.next = before;
    nd.prev = b.prev;
    if (b.prev != kNoNode) node(b.prev).next = n; else head_ = n;
    b.prev = n;
  }
}

void Graph::unlink(NodeId n) {
  Node& nd = node(n);
  if (nd.prev != kNoNode) node(nd.prev).next = nd.next; else head_ = nd.next;
  if (nd.next != kNoNode) node(nd.next).prev = nd.prev; else tail_ = nd.prev;
  nd.prev = nd.next = kNoNode;
}

NodeId Graph::add_node(OpType op, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                       std::vector<Attribute> attrs, std::string name, NodeId before) {
  auto nd = std::make_unique<Node>();
  NodeId id = static_cast<NodeId>(nodes_.size());
  nd->id = id;
  nd->op = op;
  nd->domain = op.domain();
  nd->name = std::move(name);
  nd->inputs = std::move(inputs);
  nd->outputs = std::move(outputs);
  nd->attrs = std::move(attrs);
  nodes_.push_back(std::move(nd));
  Node& n = *nodes_.back();
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] != kNoValue) add_use(n.inputs[i], Use{id, static_cast<int32_t>(i)});
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] == kNoValue) continue;
    Value& v = value(n.outputs[i]);
    if (v.producer != kNoNode)
      throw_bad_input("value '" + v.name + "' is produced by two nodes ('" + node(v.producer).name + "' and '" +
                      n.name + "')");
    v.producer = id;
    v.producer_slot = static_cast<int32_t>(i);
  }
  link_before(id, before);
  ++num_nodes_;
  for (Graph* sg : subgraphs(id)) sg->set_parent(this);
  refresh_implicit_inputs(id);
  return id;
}

NodeId Graph::create_node(OpType op, std::vector<ValueId> inputs, int num_outputs, std::vector<Attribute> attrs,
                       std::string name, NodeId before) {
  if (name.empty()) name = unique_name(op.name());
  std::vector<ValueId> outs;
  for (int i = 0; i < num_outputs; ++i) outs.push_back(add_value(unique_name(name + "_out" + std::to_string(i))));
  return add_node(op, std::move(inputs), std::move(outs), std::move(attrs), std::move(name), before);
}

void Graph::remove_node(NodeId id) {
  Node& n = node(id);
  if (!n.alive) return;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] != kNoValue) drop_use(n.inputs[i], Use{id, static_cast<int32_t>(i)});
  for (ValueId v : n.implicit_inputs) drop_use(v, Use{id, kImplicitSlot});
  n.implicit_inputs.clear();
  for (ValueId o : n.outputs) {
    if (o == kNoValue) continue;
    Value& v = value(o);
    v.producer = kNoNode;
    v.producer_slot = -1;
    if (v.uses.empty() && !v.is_graph_output) remove_value(o);
  }
  unlink(id);
  n.alive = false;
  --num_nodes_;
}

void Graph::set_input(NodeId id, size_t slot, ValueId v) {
  Node& n = node(id);
  if (slot >= n.inputs.size()) n.inputs.resize(slot + 1, kNoValue);
  if (n.inputs[slot] != kNoValue) drop_use(n.inputs[slot], Use{id, static_cast<int32_t>(slot)});
  n.inputs[slot] = v;
  if (v != kNoValue) add_use(v, Use{id, static_cast<int32_t>(slot)});
}

void Graph::replace_all_uses(ValueId from, ValueId to) {
  if (from == to) return;
  std::vector<Use> uses = value(from).uses;
  for (const Use& u : uses) {
    if (u.slot == kImplicitSlot) {
      for (Graph* sg : subgraphs(u.node))
        for (ValueId c : sg->captures())
          if (sg->value(c).captured_from == from) sg->value(c).captured_from = to;
      refresh_implicit_inputs(u.node);
    } else {
      set_input(u.node, static_cast<size_t>(u.slot), to);
    }
  }
}

void Graph::move_before(NodeId n, NodeId before) {
  if (n == before) return;
  unlink(n);
  link_before(n, before);
}

std::vector<Graph*> Graph::subgraphs(NodeId id) const {
  std::vector<Graph*> out;
  for (const Attribute& a : node(id).attrs) {
    if (a.kind == AttrKind::Graph && a.g) out.push_back(a.g.get());
    if (a.kind == AttrKind::Graphs)
      for (const auto& g : a.graphs) out.push_back(g.get());
  }
  return out;
}

void Graph::refresh_implicit_inputs(NodeId id) {
  Node& n = node(id);
  for (ValueId v : n.implicit_inputs) drop_use(v, Use{id, kImplicitSlot});
  n.implicit_inputs.clear();
  for (Graph* sg : subgraphs(id))
    for (ValueId c : sg->captures()) {
      ValueId pv = sg->value(c).captured_from;
      if (std::find(n.implicit_inputs.begin(), n.implicit_inputs.end(), pv) == n.implicit_inputs.end())
        n.implicit_inputs.push_back(pv);
    }
  for (ValueId v : n.implicit_inputs) add_use(v, Use{id, kImplicitSlot});
}

std::vector<NodeId> Graph::order() const {
  std::vector<NodeId> out;
  out.reserve(num_nodes_);
  for (NodeId n = head_; n != kNoNode; n = nodes_[n]->next) out.push_back(n);
  return out;
}

void Graph::topo_sort() {
  // Kahn's algorithm; among ready nodes the one earliest in the current order goes first, so a
  // graph already in topological order keeps it exactly.
  std::vector<NodeId> cur = order();
  std::vector<uint32_t> pos(nodes_.size(), 0), pending(nodes_.size(), 0);
  for (size_t i = 0; i < cur.size(); ++i) pos[cur[i]] = static_cast<uint32_t>(i);
  auto deps = [&](NodeId id) {
    std::vector<ValueId> in = node(id).inputs;
    in.insert(in.end(), node(id).implicit_inputs.begin(), node(id).implicit_inputs.end());
    return in;
  };
  using Item = std::pair<uint32_t, NodeId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (NodeId id : cur) {
    for (ValueId v : deps(id))
      if (v != kNoValue && value(v).producer != kNoNode) ++pending[id];
    if (!pending[id]) ready.push({pos[id], id});
  }
  std::vector<NodeId> sorted;
  while (!ready.empty()) {
    NodeId id = ready.top().second;
    ready.pop();
    sorted.push_back(id);
    for (ValueId o : node(id).outputs) {
      if (o == kNoValue) continue;
      for (const Use& u : value(o).uses)
        if (--pending[u.node] == 0) ready.push({pos[u.node], u.node});
    }
  }
  if (sorted.size() != cur.size()) {
    for (NodeId id : cur)
      if (pending[id]) throw_bad_input(node(id).describe() + " is on a cycle");
  }
  head_ = tail_ = kNoNode;
  for (NodeId id : sorted) link_before(id, kNoNode);
}

void Graph::verify() const {
  auto fail = [&](const std::string& msg) { throw_internal("graph '" + name + "': " + msg); };
  std::vector<char> defined(values_.size(), 0);
  std::unordered_map<std::string, ValueId> names;
  for (const auto& v : values_) {
    if (!v->alive) continue;
    if (!v->name.empty() && !names.emplace(v->name, v->id).second) fail("duplicate value name '" + v->name + "'");
    if (v->producer == kNoNode) defined[v->id] = 1;  // inputs, initializers, captures
    if (v->producer != kNoNode && (v->is_graph_input || v->constant))
      fail("value '" + v->name + "' is both produced by a node and an input or initializer");
    if (v->captured_from != kNoValue &&
        (!parent_ || v->captured_from >= parent_->values_.size() || !parent_->value(v->captured_from).alive))
      fail("capture '" + v->name + "' refers to no live outer value");
    for (const Use& u : v->uses) {
      if (u.node >= nodes_.size() || !nodes_[u.node]->alive)
        fail("value '" + v->name + "' is used by a removed node");
      const Node& n = node(u.node);
      bool ok = u.slot == kImplicitSlot
                    ? std::find(n.implicit_inputs.begin(), n.implicit_inputs.end(), v->id) != n.implicit_inputs.end()
                    : static_cast<size_t>(u.slot) < n.inputs.size() && n.inputs[u.slot] == v->id;
      if (!ok) fail("use list of '" + v->name + "' names " + n.describe() + " which does not use it");
    }
  }
  size_t count = 0;
  for (NodeId id = head_; id != kNoNode; id = nodes_[id]->next) {
    const Node& n = node(id);
    ++count;
    if (!n.alive) fail("removed node " + n.describe() + " is still in the order");
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ValueId v = n.inputs[i];
      if (v == kNoValue) continue;
      if (v >= values_.size() || !values_[v]->alive) fail(n.describe() + " input " + std::to_string(i) + " is dangling");
      if (!defined[v]) fail(n.describe() + " uses '" + value(v).name + "' before it is defined (order or cycle)");
      const auto& uses = value(v).uses;
      if (i >= n.use_pos.size() || n.use_pos[i] >= uses.size() || !(uses[n.use_pos[i]] == Use{id, static_cast<int32_t>(i)}))
        fail(n.describe() + " input '" + value(v).name + "' is missing from its use list");
    }
    for (ValueId v : n.implicit_inputs)
      if (!defined[v]) fail(n.describe() + " captures '" + value(v).name + "' before it is defined");
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      ValueId v = n.outputs[i];
      if (v == kNoValue) continue;
      if (value(v).producer != id || value(v).producer_slot != static_cast<int32_t>(i))
        fail(n.describe() + " output '" + value(v).name + "' does not name it as producer");
      defined[v] = 1;
    }
    for (Graph* sg : subgraphs(id)) {
      if (sg->parent() != this) fail(n.describe() + " holds a subgraph whose parent is not this graph");
      sg->verify();
    }
  }
  if (count != num_nodes_) fail("node count mismatch");
  for (ValueId o : outputs_)
    if (o >= values_.size() || !values_[o]->alive || !defined[o]) fail("graph output is not defined");
}

}  // namespace fusor
