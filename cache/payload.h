// What a cache entry holds, and its encoding.
//
// payload: the optimized model as a serialized ONNX ModelProto *with* value_info, so a hit loads
//   it without ONNX shape inference (the expensive part of a load: a forked child over the whole
//   graph) and the planner still sees every intermediate's type and shape. Weights are inline:
//   an entry does not depend on files beside the model.
// info: JSON facts about the miss that produced it, which a hit reports as its own:
//   {"rules_fired": {...}, "nodes_before": N, "ops_before": {...}, "deps": [[path, sha256], ...]}.
// The memory plan and pre-packed weights are not stored: planning takes well under a millisecond
// to a few milliseconds (bench's plan_ms), so storing them would not pay for their bytes.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/model.h"

namespace fusor::cache {

struct SessionFacts {
  std::map<std::string, int64_t> rules_fired;
  int64_t nodes_before = 0;  // top-level nodes of the original model
  std::map<std::string, int64_t> ops_before;  // op histogram of the original model, all depths
  // Files the entry depends on beyond its key (rule files reached through imports): path and
  // SHA-256 when stored; a hit whose files hash differently now is rebuilt.
  std::vector<std::pair<std::string, std::string>> deps;
};

struct Encoded {
  std::string info, payload;
};

// Throws fusor::Error when the model cannot be serialized (e.g. over protobuf's 2 GB limit).
Encoded encode_entry(const Model& model, const SessionFacts& facts);

struct Decoded {
  std::unique_ptr<Model> model;
  SessionFacts facts;
};

// `name` is the model's path for messages (Model::path is set to it). Throws fusor::Error when
// the entry does not decode (the caller drops it and rebuilds).
Decoded decode_entry(const std::string& info, std::string payload, const std::string& name);

}  // namespace fusor::cache
