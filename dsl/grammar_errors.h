// Error messages of the grammar's `expect_*` rules. With must_if, a rule that has a message
// raises a parse_error ("expected ...") as soon as it fails; rules without one backtrack.
#pragma once
#include "dsl/grammar.h"
#include "dsl/provider_grammar.h"

namespace fusor::dsl::grammar {

template <typename Rule> inline constexpr const char* error_message = nullptr;

#define FUSOR_DSL_EXPECT(rule, text) template <> inline constexpr const char* error_message<rule> = text
FUSOR_DSL_EXPECT(expect_string_end, "expected '\"' to close the string");
FUSOR_DSL_EXPECT(expect_expr, "expected an expression");
FUSOR_DSL_EXPECT(expect_op_name, "expected an op name after '|'");
FUSOR_DSL_EXPECT(expect_attr_value, "expected an attribute value after '='");
FUSOR_DSL_EXPECT(expect_spread_name, "expected a value name after '...'");
FUSOR_DSL_EXPECT(expect_attr_item, "expected an attribute 'name = value' or '...value'");
FUSOR_DSL_EXPECT(expect_attr_close, "expected ',' or '>' after an attribute");
FUSOR_DSL_EXPECT(expect_arg, "expected an argument after ','");
FUSOR_DSL_EXPECT(expect_args_close, "expected ',' or ')' after an argument");
FUSOR_DSL_EXPECT(expect_list_close, "expected ',' or ']' after a list element");
FUSOR_DSL_EXPECT(expect_paren_close, "expected ')'");
FUSOR_DSL_EXPECT(expect_member, "expected an attribute name after '.'");
FUSOR_DSL_EXPECT(expect_index_close, "expected ']' after the index");
FUSOR_DSL_EXPECT(expect_unary, "expected an operand");
FUSOR_DSL_EXPECT(expect_operand, "expected an operand after the operator");
FUSOR_DSL_EXPECT(expect_lhs_name, "expected an output name after ','");
FUSOR_DSL_EXPECT(expect_open_brace, "expected '{'");
FUSOR_DSL_EXPECT(expect_stmt_close, "expected a statement 'NAME = Op(...)' or '}'");
FUSOR_DSL_EXPECT(expect_where_close, "expected a condition or '}'");
FUSOR_DSL_EXPECT(expect_dim, "expected a dimension (an integer)");
FUSOR_DSL_EXPECT(expect_dims_close, "expected ',' or ']' after a dimension");
FUSOR_DSL_EXPECT(expect_dims, "expected a shape such as [1, 3, 224, 224] ('[]' for a scalar)");
FUSOR_DSL_EXPECT(expect_dtype, "expected an element type (float, int64, ...), 'const' or 'none'");
FUSOR_DSL_EXPECT(expect_tolerance, "expected a number after 'tolerance'");
FUSOR_DSL_EXPECT(expect_test_close,
                 "expected a test item ('NAME: TYPE[dims]', 'NAME.attr = value', 'tolerance N') or '}'");
FUSOR_DSL_EXPECT(expect_rule_name, "expected a rule name after 'rule'");
FUSOR_DSL_EXPECT(expect_level_name, "expected a level after 'level' (basic, extended, layout, all)");
FUSOR_DSL_EXPECT(expect_provider_name, "expected a provider name");
FUSOR_DSL_EXPECT(expect_benefit, "expected a non-negative integer after 'benefit'");
FUSOR_DSL_EXPECT(expect_match, "expected 'match {' after the rule's header (level, providers, benefit)");
FUSOR_DSL_EXPECT(expect_rewrite, "expected 'rewrite {' after the match block (or 'where {' before it)");
FUSOR_DSL_EXPECT(expect_param, "expected a parameter name after ','");
FUSOR_DSL_EXPECT(expect_params_close, "expected ',' or ')' after a parameter");
FUSOR_DSL_EXPECT(expect_param_list, "expected '(' and the pattern's parameters");
FUSOR_DSL_EXPECT(expect_pattern_body, "expected '{' and the pattern's statements");
FUSOR_DSL_EXPECT(expect_pattern_name, "expected a pattern name after 'pattern'");
FUSOR_DSL_EXPECT(expect_import_path, "expected a quoted file name after 'import'");
FUSOR_DSL_EXPECT(expect_version_number, "expected the version number after 'fusor-rules'");
FUSOR_DSL_EXPECT(pgrammar::expect_layout_name, "expected a layout after 'layout' (NCHW or NHWC)");
FUSOR_DSL_EXPECT(pgrammar::expect_file_name, "expected a rule file name");
FUSOR_DSL_EXPECT(pgrammar::expect_colon, "expected ':' after the level");
FUSOR_DSL_EXPECT(pgrammar::expect_kernels_close, "expected an op name (optionally 'where CONDITION') or '}'");
#undef FUSOR_DSL_EXPECT

struct errors {
  template <typename Rule> static constexpr const char* message = error_message<Rule>;
};

}  // namespace fusor::dsl::grammar
