// --dim / --shape overrides applied to a model's graph inputs.
#pragma once
#include <onnx/onnx_pb.h>

#include "core/ir/graph.h"
#include "core/onnx/onnx_io.h"

namespace fusor {

// On the parsed proto, before shape inference. --dim NAME=V replaces the symbolic dim NAME in
// the inputs, outputs and value_info; --shape sets an input's dims. Throws Usage for an input or
// dim name the graph does not have (listing what it has) or a rank that contradicts the model.
void apply_overrides(onnx::GraphProto& g, const ShapeOverrides& ov);
// The same on the IR's graph inputs (for infer_shapes after rewrites).
void apply_overrides(Graph& g, const ShapeOverrides& ov);

}  // namespace fusor
