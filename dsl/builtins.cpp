#include "dsl/builtins.h"

namespace fusor::dsl {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Unknown: return "unknown";
    case Kind::Value: return "tensor value";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "string";
    case Kind::Op: return "op name";
    case Kind::DType: return "element type";
    case Kind::List: return "list";
    case Kind::Attrs: return "attribute set";
  }
  return "unknown";
}

std::string ExprType::str() const {
  if (kind == Kind::List && elem != Kind::Unknown) return std::string("list of ") + kind_name(elem);
  return kind_name(kind);
}

const std::vector<BuiltinSpec>& builtins() {
  using A = ArgKind;
  static const std::vector<BuiltinSpec> table = {
      {"const", {A::ValueName}, true, ExprType::of(Kind::Bool),
       "true when every argument is a constant (an initializer that is not a graph input, or a Constant "
       "node's output); true for an absent optional input"},
      {"absent", {A::ValueName}, false, ExprType::of(Kind::Bool), "true when an optional input `x?` is absent"},
      {"rank", {A::ValueName}, false, ExprType::of(Kind::Int), "the value's rank"},
      {"dtype", {A::ValueName}, false, ExprType::of(Kind::DType), "the value's element type"},
      {"shape", {A::ValueName}, false, ExprType::of(Kind::List, Kind::Int), "the value's shape"},
      {"uses", {A::ValueName}, false, ExprType::of(Kind::Int), "the number of consumers of the value"},
      {"scalar", {A::ValueName}, false, ExprType::of(Kind::Unknown),  // int or float, as the constant
       "the single element of a constant with one element"},
      {"value", {A::ValueName}, false, ExprType::of(Kind::List), "the elements of a constant, as a flat list"},
      {"opset", {}, false, ExprType::of(Kind::Int), "the model's ONNX opset"},
      {"compose", {A::ListArg, A::ListArg}, false, ExprType::of(Kind::List, Kind::Int),
       "the permutation of Transpose(p) followed by Transpose(q): r[i] = p[q[i]]"},
      {"inverse", {A::ListArg}, false, ExprType::of(Kind::List, Kind::Int), "the inverse permutation"},
      {"iota", {A::IntArg}, false, ExprType::of(Kind::List, Kind::Int), "[0, 1, ..., n-1]"},
      {"len", {A::ListArg}, false, ExprType::of(Kind::Int), "the length of a list"},
      {"permute", {A::ListArg, A::ListArg}, false, ExprType::of(Kind::List),
       "the list reordered by a permutation: r[i] = xs[p[i]] (a shape after Transpose(p))"},
      {"remap_axes", {A::ListArg, A::ListArg}, false, ExprType::of(Kind::List, Kind::Int),
       "axes of a tensor before Transpose(p), renumbered for the transposed tensor: r[i] = j where "
       "p[j] == axes[i]"},
  };
  return table;
}

const BuiltinSpec* find_builtin(const std::string& name) {
  for (const auto& b : builtins())
    if (name == b.name) return &b;
  return nullptr;
}

std::vector<std::string> builtin_names() {
  std::vector<std::string> out;
  for (const auto& b : builtins()) out.push_back(b.name);
  return out;
}

}  // namespace fusor::dsl
