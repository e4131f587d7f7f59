// The ONNX opset a rule's tests are instantiated at: the opset the rules were checked at, moved
// to satisfy the rule's opset guards (top-level where conditions `opset() >= N`, `> N`, `< N`,
// `<= N`, `== N`), so a rule written for old opsets (`opset() < 14`) is tested where it fires.
#pragma once
#include "dsl/ast.h"

namespace fusor::ruletest {

int test_opset(const dsl::RuleDecl& rule, int checked_opset);

}  // namespace fusor::ruletest
