// Provenance of nodes a rule made: which rule, and which of the model's original nodes they
// replace. It is written into the node's doc_string (ONNX 1.12's NodeProto has no metadata field,
// and extra attributes on ONNX-domain nodes break the checker), as one line of JSON:
//
//   {"fusor_rule": "conv_relu", "replaced": ["conv1", "relu1"], "via": ["fold_bn"]}
//
// - replaced: the ORIGINAL nodes in pattern order, transitively: when a matched node was itself made by a rule,
//   its own `replaced` list stands in for its name. An unnamed original is "(unnamed Op)".
// - via: the rules that made matched intermediate nodes, in the order they fired (omitted when
//   empty).
// Readers (fusor inspect, examples/python/inspect_optimized.py) parse it with any JSON parser; a
// doc_string that is not such an object is not provenance.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fusor {

struct Provenance {
  std::string rule;
  std::vector<std::string> replaced;
  std::vector<std::string> via;
};

// The provenance of nodes that `rule` makes in place of `matched` (read before they are removed).
Provenance provenance_of_rewrite(const Graph& g, const std::string& rule, const std::vector<NodeId>& matched);
std::string provenance_doc_string(const Provenance& p);
// nullopt when the doc_string is not a provenance record.
std::optional<Provenance> parse_provenance(const std::string& doc_string);

}  // namespace fusor
