#include "dsl/ast.h"

namespace fusor::dsl {

const char* binary_op_spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return "||";
    case BinaryOp::And: return "&&";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::In: return "in";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
  }
  return "?";
}

const char* level_name(Level l) {
  switch (l) {
    case Level::Basic: return "basic";
    case Level::Extended: return "extended";
    case Level::Layout: return "layout";
    case Level::All: return "all";
  }
  return "basic";
}

std::optional<Level> parse_level(const std::string& s) {
  if (s == "basic") return Level::Basic;
  if (s == "extended") return Level::Extended;
  if (s == "layout") return Level::Layout;
  if (s == "all") return Level::All;
  return std::nullopt;
}

}  // namespace fusor::dsl
