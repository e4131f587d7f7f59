// A whole model: the main graph plus what the ONNX ModelProto says around it.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"

namespace fusor {

struct OpsetImport {
  std::string domain;  // "" for ONNX
  int64_t version = 0;
};

class Model {
 public:
  Model() : graph(std::make_unique<Graph>()) {}

  std::unique_ptr<Graph> graph;
  std::vector<OpsetImport> opsets;
  int64_t ir_version = 8;
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
  // ModelProto fields fusor does not model (local functions, training info), serialized and
  // merged back on export.
  std::string opaque_extras;
  // Where the model came from, for messages ("" for bytes).
  std::string path;

  // Opset version imported for a domain ("" or "ai.onnx" for ONNX); 0 when not imported.
  int64_t opset(std::string_view domain) const {
    domain = canonical_domain(domain);
    for (const auto& o : opsets)
      if (canonical_domain(o.domain) == domain) return o.version;
    return 0;
  }
  void set_opset(const std::string& domain, int64_t version) {
    for (auto& o : opsets)
      if (canonical_domain(o.domain) == canonical_domain(domain)) { o.version = version; return; }
    opsets.push_back({domain, version});
  }
};

}  // namespace fusor
