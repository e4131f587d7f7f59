// ONNX in and out: ModelProto <-> fusor::Model, with ONNX shape inference.
//
// Contract:
// - load_model parses with libonnx's protobuf classes, moves initializer bytes out of the proto
//   (no copies), loads external data relative to the model's directory, applies --dim/--shape
//   overrides to the graph inputs, runs onnx::shape_inference (subgraphs included) and records
//   every value's element type and shape. Ops without a schema or kernel load unchanged.
// - Bad input (missing/truncated/garbage file, cycle, dangling input, wrong tensor data size)
//   throws fusor::Error(BadInput) with a one-line message naming the file and, where there is
//   one, the node.
// - save_model writes a ModelProto that round-trips exactly: nodes, attributes, initializers
//   (bit-exact), inputs, outputs, opset imports, metadata. Models over protobuf's 2 GB limit are
//   written with external data beside the file.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/model.h"

namespace fusor {

struct ShapeOverrides {
  std::vector<std::pair<std::string, int64_t>> dims;    // --dim NAME=V: a symbolic dim's value
  std::vector<std::pair<std::string, Shape>> shapes;    // --shape INPUT=1x3x224x224
  bool empty() const { return dims.empty() && shapes.empty(); }
};

// Parses "NAME=V" (for --dim) and "INPUT=1x3x224x224" (for --shape); throws Usage on bad text.
std::pair<std::string, int64_t> parse_dim_override(const std::string& text);
std::pair<std::string, Shape> parse_shape_override(const std::string& text);

struct LoadOptions {
  ShapeOverrides overrides;
  bool infer_shapes = true;
};

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts = {});
// `name` is used in messages; external data resolves relative to `base_dir`.
std::unique_ptr<Model> load_model_from_bytes(std::string bytes, const LoadOptions& opts = {},
                                             const std::string& name = "<bytes>",
                                             const std::string& base_dir = ".");

// Same, parsing bytes the caller keeps alive (a mapped file: the cache hashes and loads the same
// mapping, reading the model once).
std::unique_ptr<Model> load_model_from_view(std::string_view bytes, const LoadOptions& opts, const std::string& name,
                                            const std::string& base_dir);

struct SaveOptions {
  // Force external data (weights in OUT.data beside the model); otherwise only over 2 GB.
  bool external_data = false;
  // Write inferred value_info for intermediate values.
  bool value_info = false;
};

void save_model(const Model& model, const std::string& path, const SaveOptions& opts = {});
// The serialized ModelProto (no external data).
std::string serialize_model(const Model& model);

// Re-runs ONNX shape inference over the model (after rewrites) and updates value types.
// Values ONNX cannot infer keep their current type.
void infer_shapes(Model& model, const ShapeOverrides& overrides = {});

}  // namespace fusor
