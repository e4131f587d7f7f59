// fusor::Model -> ModelProto, shared by save_model, serialize_model and infer_shapes.
#pragma once
#include <onnx/onnx_pb.h>

#include "core/ir/model.h"

namespace fusor {

struct ProtoExportOptions {
  // What happens to the main graph's initializers: written in full, left out (the caller
  // streams them), or, for shape inference, only small ones (large ones become typed inputs,
  // which is all inference needs of them).
  enum class MainInitializers { Full, Omit, ForInference };
  MainInitializers main_initializers = MainInitializers::Full;
  bool value_info = false;
};

void model_to_proto(const Model& m, onnx::ModelProto* mp, const ProtoExportOptions& opts = {});

// The name a value is written under: a capture takes its outer value's current name.
const std::string& exported_name(const Graph& g, ValueId v);

}  // namespace fusor
