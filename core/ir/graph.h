// The graph IR that the importer builds, the rewriter mutates and the executor runs.
//
// - Nodes and values live in per-graph tables; their ids are stable for the graph's lifetime
//   (a removed node or value leaves a tombstone, ids are never reused).
// - Every value knows its producer (O(1)) and its consumers (a use list).
// - Op types are interned (OpType), so dispatch is an integer compare.
// - Node order is an intrusive list kept topological: add_node inserts before a given node.
// - Initializers are values carrying a constant tensor (shared, never copied).
// - Subgraphs (If/Loop/Scan bodies) are Graphs owned by their node's attributes. A subgraph refers
//   to an outer value through a *capture*: a value of its own whose `captured_from` names the
//   parent's value. The node holding the subgraph lists those parent values as implicit inputs,
//   and they appear in the parent's use lists with slot kImplicitSlot, so dead-code removal and
//   replace_all_uses see them.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/dtype.h"
#include "core/ir/symbol.h"
#include "core/ir/tensor.h"

namespace fusor {

using NodeId = uint32_t;
using ValueId = uint32_t;
inline constexpr NodeId kNoNode = UINT32_MAX;
inline constexpr ValueId kNoValue = UINT32_MAX;
inline constexpr int32_t kImplicitSlot = -1;

// One dimension: a known size, a named symbol ("batch"), or unknown.
struct Dim {
  int64_t value = -1;
  std::string param;
  static Dim known(int64_t v) { Dim d; d.value = v; return d; }
  static Dim symbol(std::string s) { Dim d; d.param = std::move(s); return d; }
  bool is_known() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && param == o.param; }
};

// A value's type. Tensors have an element type and, when inferred, a shape. Sequences
// (sequence(T)) and optionals (optional(T)) hold their contained type in `element` (a tensor or,
// for an optional, a sequence); fusor runs both (kernels/reference/sequence_ops.cpp). Other ONNX
// types (maps, sparse tensors, sequences of maps) keep their serialized TypeProto in `opaque`.
enum class TypeKind : uint8_t { Tensor, Sequence, Optional, Opaque };

struct ValueType {
  TypeKind kind = TypeKind::Tensor;
  DataType elem = DataType::Undefined;  // Tensor: its element type
  bool has_shape = false;
  std::vector<Dim> dims;
  std::shared_ptr<const ValueType> element;  // Sequence, Optional: the contained type (may be null: unknown)
  std::string opaque;                        // Opaque: the serialized TypeProto

  static ValueType tensor(DataType t) { ValueType v; v.elem = t; return v; }
  static ValueType tensor(DataType t, const Shape& s);
  static ValueType sequence(ValueType element);
  static ValueType optional(ValueType element);
  bool is_tensor() const { return kind == TypeKind::Tensor; }
  bool is_sequence() const { return kind == TypeKind::Sequence; }
  bool is_optional() const { return kind == TypeKind::Optional; }
  int rank() const { return has_shape ? static_cast<int>(dims.size()) : -1; }
  // The static shape if every dim is known.
  std::optional<Shape> static_shape() const;
  // "float[1,3,N,224]"; "float[?]" for unknown rank; "seq(float[?])", "optional(seq(int64[3]))".
  std::string str() const;
  bool operator==(const ValueType& o) const;
};

struct Use {
  NodeId node;
  int32_t slot;  // input index, or kImplicitSlot for a use inside the node's subgraphs
  bool operator==(const Use& o) const { return node == o.node && slot == o.slot; }
};

struct Value {
  ValueId id = kNoValue;
  std::string name;
  ValueType type;
  NodeId producer = kNoNode;
  int32_t producer_slot = -1;
  std::vector<Use> uses;           // consumers, as a set: order is deterministic, not insertion order
  TensorPtr constant;              // set for initializers
  bool is_graph_input = false;     // also set for initializers listed as graph inputs
  bool is_graph_output = false;
  ValueId captured_from = kNoValue;  // in a subgraph: the parent graph's value it refers to
  std::string doc_string;
  bool alive = true;

  bool is_initializer() const { return constant != nullptr; }
  // Constant in the sense of the rule language: an initializer that is not also a graph input.
  bool is_constant_initializer() const { return constant != nullptr && !is_graph_input; }
};

struct Node {
  NodeId id = kNoNode;
  OpType op;
  std::string name;
  std::string domain;   // as written in the model ("" / "ai.onnx" / "com.microsoft" / "fusor")
  std::string overload; // ONNX 1.15+ field, kept for round trip
  std::vector<ValueId> inputs;   // kNoValue for an absent optional input
  std::vector<ValueId> outputs;  // kNoValue for an absent optional output
  std::vector<Attribute> attrs;
  std::vector<ValueId> implicit_inputs;  // parent values captured by the subgraphs
  // Per input slot: where this node's use sits in that input's use list, kept by the Graph so
  // dropping a use is O(1) even for a constant with thousands of consumers.
  std::vector<uint32_t> use_pos;
  std::string doc_string;
  bool alive = true;
  NodeId prev = kNoNode, next = kNoNode;

  const Attribute* attr(std::string_view n) const;
  Attribute* attr(std::string_view n);
  int64_t attr_int(std::string_view n, int64_t dflt) const;
  float attr_float(std::string_view n, float dflt) const;
  std::string attr_string(std::string_view n, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(std::string_view n, std::vector<int64_t> dflt = {}) const;
  std::vector<float> attr_floats(std::string_view n, std::vector<float> dflt = {}) const;
  void set_attr(Attribute a);  // replaces an attribute of the same name
  bool remove_attr(std::string_view n);
  // Number of present (non-absent) inputs.
  int num_present_inputs() const;
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != kNoValue; }
  // "node 'conv1' (Conv)"
  std::string describe() const;
};

class Graph {
 public:
  explicit Graph(Graph* parent = nullptr) : parent_(parent) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name;
  std::string doc_string;
  // Fields fusor does not model (sparse initializers, quantization annotations), serialized
  // as a GraphProto and merged back on export.
  std::string opaque_extras;

  Graph* parent() const { return parent_; }
  void set_parent(Graph* p) { parent_ = p; }

  // ---- values ----
  Value& value(ValueId id) { return *values_[id]; }
  const Value& value(ValueId id) const { return *values_[id]; }
  size_t value_capacity() const { return values_.size(); }
  // Creates a value; the name must be unique in this graph (throws BadInput otherwise).
  ValueId add_value(std::string name, ValueType type = {});
  ValueId find_value(std::string_view name) const;  // kNoValue when absent
  // Looks the name up here, then in enclosing graphs; returns the graph that holds it.
  std::pair<const Graph*, ValueId> resolve(std::string_view name) const;
  // A fresh name based on `base`, unique here and in enclosing graphs.
  std::string unique_name(std::string_view base);
  void rename_value(ValueId v, std::string new_name);
  ValueId add_initializer(std::string name, Tensor t);
  ValueId add_initializer(std::string name, TensorPtr t);
  // A capture of a parent value (see the header comment).
  ValueId add_capture(std::string name, ValueId parent_value);
  void add_input(ValueId v);
  void add_output(ValueId v);
  void set_output(size_t i, ValueId v);
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  // Initializers in the order they were added (export order).
  std::vector<ValueId> initializers() const;
  std::vector<ValueId> captures() const;
  // Removes an unused value that is not an input/output (initializers included).
  void remove_value(ValueId v);

  // ---- nodes ----
  Node& node(NodeId id) { return *nodes_[id]; }
  const Node& node(NodeId id) const { return *nodes_[id]; }
  size_t node_capacity() const { return nodes_.size(); }
  size_t num_nodes() const { return num_nodes_; }
  // Adds a node whose outputs are existing values without a producer. Inserted before `before`
  // (kNoNode: at the end).
  NodeId add_node(OpType op, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                  std::vector<Attribute> attrs = {}, std::string name = {}, NodeId before = kNoNode);
  // Same, creating `num_outputs` fresh output values named after the node. (A distinct name:
  // an add_node overload taking an int made `add_node(op, {x}, {y})` pick it and silently create
  // a new output instead of using y.)
  NodeId create_node(OpType op, std::vector<ValueId> inputs, int num_outputs, std::vector<Attribute> attrs = {},
                  std::string name = {}, NodeId before = kNoNode);
  // Removes the node. Its outputs lose their producer; outputs with no uses that are not graph
  // outputs are removed too.
  void remove_node(NodeId n);
  void set_input(NodeId n, size_t slot, ValueId v);
  // Points every node use of `from` (implicit uses included) at `to`. Graph outputs are untouched.
  void replace_all_uses(ValueId from, ValueId to);
  // Moves node n to just before `before` in the order.
  void move_before(NodeId n, NodeId before);
  // Recomputes implicit inputs of n from its subgraphs' captures.
  void refresh_implicit_inputs(NodeId n);

  // Node ids in execution (topological) order.
  std::vector<NodeId> order() const;
  NodeId first() const { return head_; }
  NodeId next(NodeId n) const { return nodes_[n]->next; }
  // Re-establishes topological order (stable: keeps the current order where valid). Throws
  // BadInput naming a node on the cycle when there is one.
  void topo_sort();

  // Checks the invariants: ids consistent, uses match inputs, every input defined before use
  // (acyclic), unique names, graph outputs present. Throws Error(Internal) naming the first
  // violation. Recurses into subgraphs.
  void verify() const;

  // All subgraphs held by node n's attributes.
  std::vector<Graph*> subgraphs(NodeId n) const;

 private:
  void link_before(NodeId n, NodeId before);
  void unlink(NodeId n);
  void add_use(ValueId v, Use u);
  void drop_use(ValueId v, Use u);

  Graph* parent_ = nullptr;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unordered_map<std::string, ValueId> by_name_;
  std::vector<ValueId> inputs_, outputs_;
  NodeId head_ = kNoNode, tail_ = kNoNode;
  size_t num_nodes_ = 0;
  uint64_t name_counter_ = 0;
};

}  // namespace fusor
