// The catalog of fusor's own ops (domain "fusor"): one table of data, the single source of truth
// for the rule checks (dsl/fusor_ops.h turns it into the DSL's OpInfo) and the ONNX schema
// registration (core/onnx/fusor_schemas.h). A module of its own so that both can depend on it.
//
// Each entry is written in a compact signature syntax:
//   inputs/outputs  "X:T W:T B?:T"      NAME[?|...]:TYPE  (? optional, ... variadic); TYPE is a
//                                       constraint name or a fixed type, "tensor(float)"
//   types           "T=float,float16,double; M=float,bool"
//   attrs           "group:int=1 kernel_shape:ints strides:ints axis:int! activation:string="
//                   NAME:KIND[=DEFAULT] or NAME:KIND! for a required attribute;
//                   ("floats=" defaults to the empty list)
//                   KIND is float, int, string, floats, ints, strings or tensor.
//   shape           how the outputs' types follow from the inputs (ONNX shape inference):
//                   ""           every output like input 0 (elementwise ops, normalizations)
//                   "as OP"      ONNX's inference of OP ("as Conv" for FusedConv)
//                   "nhwc OP"    ONNX's inference of OP on a channels-first view of input 0,
//                                output 0 permuted back to channels-last
//                   "matmul"     MatMul's inference on the views transA/transB give
//                   "attention"  Q's shape with the last dimension from V
//                   "packed_attention"  QKV's shape with the last dimension divided by 3
//                   "winograd_conv"  Conv's output shape from X and the transformed U (blocked
//                                    when X is rank 5)
//                   "to_nchwc" / "from_nchwc"  the reorders to and from the blocked layout
//                   "nchwc OP"   ONNX's inference of OP on the blocked input's NCHW view,
//                                output blocked again ("nchwc_conv": input 0 blocked or NCHW)
//                   "qmatmul"    "matmul" for the quantized QMatMul (output type of input 0);
//                                "qmatmul_float" the same with a float output
//                   "conv_float" Conv's inference with a float output (ConvIntegerToFloat);
//                                "nhwc_conv_float" the same as "nhwc Conv"
//                   "lookup"     input 0's shape, input 1's (the table's) element type
// Facts the rewrite engine needs about an op (windowed, commutative, ...) are in op_traits.h.
// Adding an op: its entry here, an op_traits.cpp entry when a trait differs from the defaults,
// its name in op_names.h when code dispatches on it, its kernel and its rules.
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
  const char* shape = "";
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

// The shape rules of the `shape` column above, parsed here (the one place their names are
// written); core/onnx/fusor_schemas.cpp dispatches on them with a switch the compiler checks.
enum class ShapeRule {
  LikeInput0,       // ""
  As,               // "as OP"
  Nhwc,             // "nhwc OP"
  MatMul,           // "matmul"
  Attention,        // "attention"
  PackedAttention,  // "packed_attention"
  WinogradConv,     // "winograd_conv"
  WinogradFilter,   // "winograd_filter"
  ToNchwc,          // "to_nchwc"
  FromNchwc,        // "from_nchwc"
  NchwcConv,        // "nchwc_conv"
  Nchwc,            // "nchwc OP"
  QMatMul,          // "qmatmul"
  QMatMulFloat,     // "qmatmul_float"
  ConvFloat,        // "conv_float"
  NhwcConvFloat,    // "nhwc_conv_float"
  Lookup,           // "lookup"
};

struct FusorOpSignature {
  std::string name;
  std::string doc;
  std::vector<FusorParam> inputs, outputs;
  std::vector<FusorTypeConstraint> constraints;
  std::vector<FusorAttr> attrs;  // table order
  std::string shape;             // the shape rule, as written ("" or "as Conv", ...)
  ShapeRule shape_rule = ShapeRule::LikeInput0;
  std::string shape_op;          // OP of "as OP", "nhwc OP", "nchwc OP"; "" otherwise
};

// The table parsed, in table order. A malformed entry is a bug in fusor: std::logic_error.
const std::vector<FusorOpSignature>& fusor_op_signatures();
const FusorOpSignature* find_fusor_op_signature(const std::string& name);

}  // namespace fusor
