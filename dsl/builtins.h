// The built-in functions of `where` and `rewrite` expressions, as one table.
#pragma once
#include <string>
#include <vector>

namespace fusor::dsl {

// What an expression evaluates to, as far as the rule alone can tell.
enum class Kind { Unknown, Value, Bool, Int, Float, String, Op, DType, List, Attrs };
const char* kind_name(Kind k);

struct ExprType {
  Kind kind = Kind::Unknown;
  Kind elem = Kind::Unknown;  // for List: the elements' kind (Unknown when mixed or empty)
  static ExprType of(Kind k, Kind e = Kind::Unknown) { return ExprType{k, e}; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Unknown; }
  // "int", "list of int", ...
  std::string str() const;
};

// Argument kinds of built-ins.
enum class ArgKind {
  ValueName,  // a name bound to a tensor value in the match
  IntArg,     // an integer expression
  ListArg,    // a list expression
};

struct BuiltinSpec {
  const char* name;
  std::vector<ArgKind> args;  // fixed arguments
  bool variadic = false;      // the last argument kind repeats (at least once)
  ExprType result;
  const char* doc;
};

const std::vector<BuiltinSpec>& builtins();
const BuiltinSpec* find_builtin(const std::string& name);
std::vector<std::string> builtin_names();

}  // namespace fusor::dsl
