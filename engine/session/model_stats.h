// What `fusor inspect` and `fusor optimize` report about a model: node counts, op histogram,
// inputs/outputs with types and shapes, initializer bytes, opsets. docs/cli.md defines each key.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/model.h"

namespace fusor {

struct IoStats {
  std::string name;
  std::string type;  // ONNX's spelling: "tensor(float)", "seq(tensor(int64))", ...
  bool has_shape = false;
  std::vector<Dim> dims;  // when has_shape
};

struct ModelStats {
  int64_t nodes = 0;            // nodes of the top-level graph (ONNX: len(graph.node))
  int64_t subgraph_nodes = 0;   // nodes inside subgraphs, recursively
  int64_t constant_nodes = 0;   // Constant nodes at all depths
  std::map<std::string, int64_t> ops;  // op -> count at all depths; "domain::Op" outside ONNX
  std::vector<IoStats> inputs;   // graph inputs a caller feeds (initializer-backed ones excluded)
  std::vector<IoStats> outputs;
  int64_t initializers = 0;       // initializer tensors at all depths
  int64_t initializer_bytes = 0;  // their data bytes (string tensors: total string length)
  std::vector<OpsetImport> opsets;
};

ModelStats model_stats(const Model& model);
// The op histogram alone (cheaper than model_stats).
std::map<std::string, int64_t> op_histogram(const Model& model);
// ONNX's type spelling for a value type ("tensor(float)"; opaque types decoded from their TypeProto).
std::string onnx_type_name(const ValueType& type);

}  // namespace fusor
