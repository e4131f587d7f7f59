#include "engine/ruletest/test_opset.h"

#include <algorithm>
#include <functional>

namespace fusor::ruletest {

namespace {

bool is_opset_call(const dsl::AstExpr& e) {
  auto* c = e.dyn<dsl::CallExpr>();
  return c && c->ops.size() == 1 && c->ops[0].domain.empty() && c->callee() == "opset" && c->args.empty();
}

}  // namespace

int test_opset(const dsl::RuleDecl& rule, int checked_opset) {
  int lo = 1, hi = checked_opset;
  std::function<void(const dsl::AstExpr&)> scan = [&](const dsl::AstExpr& e) {
    auto* b = e.dyn<dsl::BinaryExpr>();
    if (!b) return;
    if (b->op == dsl::BinaryOp::And) {
      scan(*b->lhs);
      scan(*b->rhs);
      return;
    }
    // opset() OP N, or N OP opset() (flipped).
    const dsl::IntExpr* n = nullptr;
    dsl::BinaryOp op = b->op;
    if (is_opset_call(*b->lhs)) n = b->rhs->dyn<dsl::IntExpr>();
    else if (is_opset_call(*b->rhs)) {
      n = b->lhs->dyn<dsl::IntExpr>();
      switch (op) {
        case dsl::BinaryOp::Lt: op = dsl::BinaryOp::Gt; break;
        case dsl::BinaryOp::Le: op = dsl::BinaryOp::Ge; break;
        case dsl::BinaryOp::Gt: op = dsl::BinaryOp::Lt; break;
        case dsl::BinaryOp::Ge: op = dsl::BinaryOp::Le; break;
        default: break;
      }
    }
    if (!n) return;
    int v = static_cast<int>(n->value);
    switch (op) {
      case dsl::BinaryOp::Ge: lo = std::max(lo, v); break;
      case dsl::BinaryOp::Gt: lo = std::max(lo, v + 1); break;
      case dsl::BinaryOp::Le: hi = std::min(hi, v); break;
      case dsl::BinaryOp::Lt: hi = std::min(hi, v - 1); break;
      case dsl::BinaryOp::Eq: lo = std::max(lo, v); hi = std::min(hi, v); break;
      default: break;
    }
  };
  for (const auto& w : rule.where) scan(*w);
  // The newest opset the guards allow; a guard above the checked opset wins (sema checks the
  // rule's ops there too).
  return lo > hi ? lo : hi;
}

}  // namespace fusor::ruletest
