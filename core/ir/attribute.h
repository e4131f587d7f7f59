// Typed node attributes, as in ONNX's AttributeProto.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor {

class Graph;

enum class AttrKind { Undefined, Float, Int, String, Tensor, Graph, Floats, Ints, Strings, Tensors, Graphs, Opaque };

const char* attr_kind_name(AttrKind k);

struct Attribute {
  std::string name;
  AttrKind kind = AttrKind::Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  TensorPtr t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorPtr> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  // Kinds fusor does not model (sparse tensors, type protos, ref_attr_name) keep their serialized
  // AttributeProto here and are written back as they came.
  std::string opaque;
  std::string doc_string;

  static Attribute make_int(std::string n, int64_t v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Int; a.i = v; return a; }
  static Attribute make_float(std::string n, float v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Float; a.f = v; return a; }
  static Attribute make_string(std::string n, std::string v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::String; a.s = std::move(v); return a; }
  static Attribute make_ints(std::string n, std::vector<int64_t> v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Ints; a.ints = std::move(v); return a; }
  static Attribute make_floats(std::string n, std::vector<float> v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Floats; a.floats = std::move(v); return a; }
  static Attribute make_strings(std::string n, std::vector<std::string> v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Strings; a.strings = std::move(v); return a; }
  static Attribute make_tensor(std::string n, TensorPtr v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Tensor; a.t = std::move(v); return a; }
};

}  // namespace fusor
