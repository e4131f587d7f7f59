// The catalog of fusor's own ops (domain "fusor"): one table of data, the single source of truth
// for the rule checks (dsl/fusor_ops.h turns it into the DSL's OpInfo) and the ONNX schema
// registration (core/onnx/fusor_schemas.h). A module of its own so that both can depend on it.
//
// Each entry is written in a compact signature syntax:
//   inputs/outputs  "X:T W:T B?:T"      NAME[?|...]:TYPE  (? optional, ... variadic)
//   types           "T=float,float16,double; M=float,bool"
//   attrs           "group:int=1 kernel_shape:ints strides:ints axis:int! activation:string="
//                   NAME:KIND[=DEFAULT] or NAME:KIND! for a required attribute;
//                   KIND is float, int, string, floats, ints, strings or tensor.
#pragma once
#include <string>
#include <vector>

namespace fusor {

struct FusorOpSpec {
  const char* name;
  const char* inputs;
  const char* outputs;
  const char* types;
  const char* attrs;
  const char* doc;
};

inline constexpr int kFusorOpsetVersion = 1;

const std::vector<FusorOpSpec>& fusor_op_specs();

// One table entry with its signature syntax parsed (no interpretation of types or kinds beyond
// splitting; consumers map them to their own vocabularies).
struct FusorParam {
  enum class Option { Single, Optional, Variadic };
  std::string name;
  Option option = Option::Single;
  std::string type;  // a constraint name ("T") or a fixed type
};

struct FusorAttr {
  std::string name;
  std::string kind;  // "float", "int", "string", "floats", "ints", "strings", "tensor"
  bool required = false;
  bool has_default = false;
  std::string default_text;  // as written after '=' ("1e-05", "NOTSET", "" for an empty string)
};

struct FusorTypeConstraint {
  std::string name;                // "T"
  std::vector<std::string> types;  // ONNX element type names: "float", "float16", "bool"
};

struct FusorOpSignature {
  std::string name;
  std::string doc;
  std::vector<FusorParam> inputs, outputs;
  std::vector<FusorTypeConstraint> constraints;
  std::vector<FusorAttr> attrs;  // table order
};

// The table parsed, in table order. A malformed entry is a bug in fusor: std::logic_error.
const std::vector<FusorOpSignature>& fusor_op_signatures();
const FusorOpSignature* find_fusor_op_signature(const std::string& name);

}  // namespace fusor
