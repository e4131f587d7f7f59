// Building the IR from a parsed (and shape-inferred) ModelProto.
#pragma once
#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

#include "core/ir/model.h"
#include "core/onnx/onnx_io.h"

namespace fusor {

// Consumes mp (initializer bytes are moved out of it). `name` prefixes every BadInput message;
// external data resolves relative to base_dir.
std::unique_ptr<Model> import_model_proto(onnx::ModelProto& mp, const LoadOptions& opts, const std::string& name,
                                          const std::string& base_dir);

// "node 'conv1' (Conv)", or for an unnamed node "unnamed node (Conv) producing 'y'".
std::string describe_node(const Graph& g, const Node& n);

}  // namespace fusor
