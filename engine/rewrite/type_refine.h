// Re-inference of an existing node's output types while the rewrite loop runs. Constant folding
// turns computed shapes (Shape -> Gather -> Concat feeding a Reshape) into constants; the values
// downstream keep the unknown ranks the model's shape inference gave them, so rules that test
// ranks or shapes (`rank(q) >= 2`, `shape(a) == shape(b)`) would never match. The runner refines a
// node's outputs when it visits the node, and revisits the consumers of outputs that improved.
//
// A refinement only adds knowledge: an unknown element type, rank or dimension may become known,
// a known one is never replaced (a conflicting inference keeps the old type).
#pragma once
#include <vector>

#include "core/ir/graph.h"

namespace fusor {

// Whether some output of n lacks an element type, a rank, or a dimension (neither a value nor a
// symbol): the cases inference may improve once n's inputs are better known.
bool types_incomplete(const Graph& g, NodeId n);

// Re-infers n's output types from its inputs and merges them into the current ones. Returns true
// when some output became better known; `consumers` gets the nodes reading those outputs.
bool refine_node_types(Graph& g, NodeId n, int64_t opset, std::vector<NodeId>& consumers);

// `better` merged into `old`: the merged type, and whether it knows more than `old`.
// Conflicts (different element types, ranks or known dimensions) keep `old`.
bool merge_type(const ValueType& old, const ValueType& better, ValueType& merged);

}  // namespace fusor
