// Small graph queries the matcher, rewriter and passes share.
#pragma once
#include <optional>
#include <string>

#include "core/ir/graph.h"
#include "core/pattern/rule.h"

namespace fusor {

// The constant tensor of a value in the rule language's sense: an initializer that is not a graph
// input, or the output of a Constant node (value / value_float / value_int / value_floats /
// value_ints), or, in a subgraph, a capture whose outer value is one of those (so rules and
// constant folding inside an If/Loop/Scan body see outer-scope weights as the constants they are).
// Null otherwise.
TensorPtr constant_of(const Graph& g, ValueId v);

// Whether node n reads or writes a sequence or optional value (or any non-tensor type), or its
// op is one of the sequence/optional ops (op_traits non_tensor_values). Such values are never
// constants, and no rule knows them: constant folding and the rules leave these nodes alone
// (dead-code removal and CSE, which only compare and drop nodes, still apply).
bool touches_non_tensor(const Graph& g, NodeId n);

// Removes g's captures that nothing in g uses any more (a fold inside the subgraph replaced the
// last reader) and refreshes the implicit inputs of `holder`, the parent's node owning g; a parent
// initializer left without uses goes too. Returns whether anything was removed.
bool prune_unused_captures(Graph& parent, NodeId holder, Graph& g);

// ONNX's default for an attribute of `op` at `opset` (0: newest), from libonnx's schemas. An
// attribute a later version of the op added (BatchNormalization's training_mode in opset 14) reads,
// at an opset whose schema lacks it, as the default that later version gives it: ONNX picks such
// defaults to keep the older behaviour, and rules can then state one guard for every opset.
std::optional<Attribute> onnx_attr_default(OpType op, const std::string& name, int64_t opset = 0);

// The attribute's kind in the op's schema (Undefined when unknown).
AttrKind onnx_attr_kind(OpType op, const std::string& name, int64_t opset = 0);

// The element type a rewrite literal gets at input `slot` of a new node of `op`: int64 when the
// schema allows only int64 there (shape-like inputs), else the element type of another input
// sharing the slot's type constraint (`known[i]`, Undefined when unknown), else `fallback`.
DataType literal_dtype(OpType op, int64_t opset, size_t slot, const std::vector<DataType>& known, DataType fallback);

// A tensor of `dtype` holding the literal's values (scalar: rank 0; list: 1-D).
Tensor literal_tensor(const Literal& lit, DataType dtype);

// Whether the literal matches a constant tensor: every element equal (floats within the
// literal tolerance, core/pattern/pattern.h; integers exactly; an integer literal also matches float constants).
// A scalar literal requires the constant to be a scalar or all-ones shape of rank <= out_rank
// (out_rank < 0: unknown, then rank <= 1); a list literal requires a 1-D tensor of that length.
bool literal_matches(const Literal& lit, const Tensor& t, int out_rank);

// Element-wise equality of two attributes (floats with the literal tolerance).
bool attr_equal(const Attribute& a, const Attribute& b);

// Attribute kinds fusor compares structurally; Tensor/Graph attributes compare by identity
// except tensors, which compare bitwise.
std::string attr_str(const Attribute& a);

}  // namespace fusor
