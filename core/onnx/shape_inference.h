// ONNX shape inference, tolerant of what it cannot infer.
#pragma once
#include <onnx/onnx_pb.h>

namespace fusor {

// Runs onnx::shape_inference over the model (subgraphs included) and records the results in the
// model's value_info and output types. Ops without a schema (custom domains), nodes their schema
// rejects and inference errors are skipped: this never throws. Inference runs in a forked child
// so that a crash inside libonnx cannot take the process down (FUSOR_INFER_IN_PROCESS=1 runs it
// in process, for debugging).
void run_onnx_shape_inference(onnx::ModelProto& mp);

}  // namespace fusor
