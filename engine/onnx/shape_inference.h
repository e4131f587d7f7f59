// ONNX shape inference, tolerant of what it cannot infer.
#pragma once
#include <onnx/onnx_pb.h>

namespace fusor {

// Runs onnx::shape_inference over the model in place (subgraphs included), adding value_info.
// Ops without a schema (custom domains) and inference errors are skipped: this never throws.
void run_onnx_shape_inference(onnx::ModelProto& mp);

}  // namespace fusor
