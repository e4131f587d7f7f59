// Types and shapes for nodes the rewriter creates, one node at a time: the op's ONNX inference
// function (libonnx schemas, so every ONNX op and every op with a registered schema is covered)
// run on the node's input types and small constant inputs. Cheaper than re-inferring the model
// after every rewrite; the session may still call fusor::infer_shapes once at the end.
#pragma once
#include "core/ir/graph.h"

namespace fusor {

// Sets the types of n's outputs. Outputs whose type cannot be inferred (no schema, inference
// error) get input 0's element type without a shape when they have no type yet.
// Returns false when the op's inference function rejected the node (a type error).
bool infer_node_types(Graph& g, NodeId n, int64_t opset);

}  // namespace fusor
