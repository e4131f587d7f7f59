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

}  // namespace fusor::dsl
