// Graphviz DOT drawings of a model (`fusor inspect --dot/--svg/--compare`).
//
// Nodes are boxes labelled "Op\nname"; nodes a rule made (provenance doc_string) are filled
// orange, fusor-domain ops bold, with a tooltip naming the rule and the nodes they replaced.
// Graph inputs and outputs are ellipses; edges carry the value's shape when it is known.
// Initializers (weights) are not drawn, to keep the picture readable; subgraph bodies are not
// drawn either (their holder's label counts their nodes).
#pragma once
#include <string>

#include "core/ir/model.h"

namespace fusor {

// One digraph of the model's main graph.
std::string model_dot(const Model& model, const std::string& title);
// Before and after side by side: two clusters in one digraph.
std::string compare_dot(const Model& before, const std::string& before_title, const Model& after,
                        const std::string& after_title);

}  // namespace fusor
