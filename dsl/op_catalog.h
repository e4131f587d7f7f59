// What the checks know about ops: inputs, outputs, attributes and element types, for ONNX ops
// (from libonnx's schema registry, at a target opset) and for fusor's own ops (fusor_ops.h).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/dtype.h"

namespace fusor::dsl {

// A set of element types: bit i is DataType(i).
using TypeSet = uint32_t;
inline constexpr TypeSet kAnyType = 0xFFFFFFFEu;  // every defined DataType
inline TypeSet type_bit(DataType t) { return 1u << static_cast<int>(t); }
TypeSet float_types();    // float, double, float16, bfloat16
TypeSet numeric_types();  // float_types() and the integer types
// "float", "float, double or float16"
std::string typeset_str(TypeSet s);

enum class AttrType { Float, Int, String, Tensor, Graph, Floats, Ints, Strings, Tensors, Graphs, Other };
const char* attr_type_name(AttrType t);

struct AttrInfo {
  std::string name;
  AttrType type = AttrType::Other;
  bool required = false;
  // True for the attributes fusor's normalization creates from inputs (Clip's min and max):
  // readable and matchable in rules, never copied by `<...c>`.
  bool normalized = false;
  std::string default_text;  // "" when none; e.g. "1e-05", "NOTSET", "[1, 1]"
  // > 0: the op's schema at the checked opset lacks this attribute; version `since` of the op added
  // it with a default (BatchNormalization's training_mode, opset 14). Rules may read and match it
  // (an older node reads as that default, the behaviour the older op had); rewrites may not write
  // it, since a node of the older opset cannot carry it.
  int since = 0;
};

enum class ParamOption { Single, Optional, Variadic };

struct FormalParam {
  std::string name;
  ParamOption option = ParamOption::Single;
  std::string type_str;  // a constraint name ("T") or a fixed type ("tensor(int64)")
};

struct OpInfo {
  std::string domain;  // "" for ONNX
  std::string name;
  int since_version = 1;
  std::vector<FormalParam> inputs, outputs;
  int min_inputs = 0, max_inputs = 0, min_outputs = 0, max_outputs = 0;
  std::vector<AttrInfo> attrs;                 // sorted by name
  std::map<std::string, TypeSet> constraints;  // "T" -> allowed element types
  bool commutative = false;  // operands match in either order (Add, Mul, Max, ...)
  std::string doc;

  const AttrInfo* attr(const std::string& n) const;
  // The formal parameter an actual input/output index binds to (the last one when variadic);
  // null past the end.
  const FormalParam* input_formal(size_t i) const;
  const FormalParam* output_formal(size_t i) const;
  // The element types a formal parameter allows (kAnyType when not a tensor type we model).
  TypeSet types_of(const FormalParam& p) const;
  // "Conv", "fusor.FusedConv"
  std::string qualified() const { return domain.empty() ? name : domain + "." + name; }
};

// Why a lookup failed.
enum class OpLookup { Found, UnknownDomain, UnknownOp, NotYet, Deprecated };

struct OpLookupResult {
  OpLookup status = OpLookup::UnknownOp;
  const OpInfo* op = nullptr;
  int first_version = 0;  // NotYet: the opset that introduces the op
};

class OpCatalog {
 public:
  // `onnx_opset` 0: the newest opset libonnx knows.
  explicit OpCatalog(int onnx_opset = 0);
  int onnx_opset() const { return opset_; }
  static int newest_onnx_opset();

  // The op at the catalog's opset (or `opset` if > 0, for ONNX-domain ops).
  OpLookupResult find(const std::string& domain, const std::string& name, int opset = 0) const;
  // The op name in `domain` closest to `name` ("" when nothing is close).
  std::string suggest(const std::string& domain, const std::string& name) const;
  bool known_domain(const std::string& domain) const;

 private:
  int opset_;
  mutable std::map<std::string, std::unique_ptr<OpInfo>> cache_;  // "domain\0name\0opset"
};

// Element type from its ONNX spelling ("float", "int64", "float16", ...); Undefined if unknown.
DataType dtype_from_rule_name(const std::string& s);

}  // namespace fusor::dsl
