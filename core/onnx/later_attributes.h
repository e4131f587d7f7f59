// Attributes that later versions of an ONNX op added (BatchNormalization's training_mode in
// opset 14, Reshape's allowzero, ...), for code that reads such an attribute on a node of an older
// opset: the rule checker (dsl/op_catalog, AttrInfo::since) and the matcher's attribute defaults
// (engine/rewrite/graph_util, onnx_attr_default). Both read it as the default of the version that
// added it: ONNX chooses such defaults to keep the older behaviour.
//
// Header-only over libonnx's schema registry (callers link onnx already); no state.
#pragma once
#include <onnx/defs/schema.h>

#include <string>
#include <vector>

namespace fusor {

struct LaterAttribute {
  std::string name;
  const onnx::OpSchema::Attribute* decl = nullptr;  // as the version that added it declares it
  int since = 0;                                    // that version
};

// Every attribute that a version of s's op after s added and s lacks, in version order, each at
// the first version that has it.
inline std::vector<LaterAttribute> attributes_added_after(const onnx::OpSchema& s) {
  std::vector<LaterAttribute> out;
  const onnx::OpSchema* newest = onnx::OpSchemaRegistry::Schema(s.Name(), s.domain());
  if (!newest) return out;
  for (int v = s.SinceVersion() + 1; v <= newest->SinceVersion(); ++v) {
    const onnx::OpSchema* later = onnx::OpSchemaRegistry::Schema(s.Name(), v, s.domain());
    if (!later || later->SinceVersion() != v) continue;
    for (const auto& [name, a] : later->attributes()) {
      if (s.attributes().count(name)) continue;
      bool seen = false;
      for (const auto& l : out) seen |= l.name == name;
      if (!seen) out.push_back({name, &a, v});
    }
  }
  return out;
}

}  // namespace fusor
