// Which grammar rules become parse-tree nodes. ast_builder.cpp reads exactly these.
#pragma once
#include <tao/pegtl/contrib/parse_tree.hpp>

#include "dsl/grammar.h"
#include "dsl/provider_grammar.h"

namespace fusor::dsl {

namespace pt = tao::pegtl::parse_tree;

template <typename Rule>
using tree_selector = pt::selector<
    Rule,
    pt::store_content::on<grammar::name, grammar::wildcard, grammar::int_lit, grammar::float_lit,
                          grammar::string_lit, grammar::op_name, grammar::expect_member, grammar::level_name,
                          grammar::dtype_name, grammar::test_attr_name, grammar::const_mark, grammar::absent_mark,
                          grammar::not_op, grammar::neg_op, grammar::coalesce_op, grammar::mul_op, grammar::add_op,
                          grammar::cmp_op, grammar::and_op, grammar::or_op, pgrammar::layout_name,
                          pgrammar::bare_path>,
    pt::remove_content::on<grammar::version_line, grammar::import_decl, grammar::rule_decl, grammar::level_clause,
                           grammar::providers_clause, grammar::benefit_clause, grammar::match_block,
                           grammar::where_block, grammar::rewrite_block, grammar::statement, grammar::outputs,
                           grammar::test_block, grammar::test_input, grammar::test_attr, grammar::test_tolerance,
                           grammar::test_value, grammar::dims, grammar::pattern_decl, grammar::param_list,
                           grammar::pattern_body, grammar::call, grammar::alternation, grammar::attr_list,
                           grammar::attr_set, grammar::attr_spread, grammar::call_args, grammar::optional_arg,
                           grammar::variadic_arg, grammar::list_lit, grammar::index_suffix, grammar::member_suffix,
                           pgrammar::provider_version, pgrammar::layout_decl, pgrammar::rules_decl,
                           pgrammar::kernels_decl, pgrammar::kernel_decl>,
    pt::fold_one::on<grammar::postfix_expr, grammar::unary_expr, grammar::expr, grammar::arith_expr,
                     grammar::paren_expr,
                     // Branch rules with an error message must be selected: PEGTL's parse tree
                     // skips the control's failure() (which raises) for unselected branches.
                     // Each has exactly one child, which fold_one puts in its place.
                     grammar::expect_expr, grammar::expect_op_name, grammar::expect_attr_value,
                     grammar::expect_spread_name, grammar::expect_attr_item, grammar::expect_arg,
                     grammar::expect_unary, grammar::expect_operand, grammar::expect_lhs_name, grammar::expect_dim,
                     grammar::expect_dims, grammar::expect_dtype, grammar::expect_tolerance,
                     grammar::expect_rule_name, grammar::expect_level_name, grammar::expect_provider_name,
                     grammar::expect_benefit, grammar::expect_match, grammar::expect_rewrite, grammar::expect_param,
                     grammar::expect_param_list, grammar::expect_pattern_body, grammar::expect_pattern_name,
                     grammar::expect_import_path, grammar::expect_version_number, pgrammar::expect_layout_name,
                     pgrammar::expect_file_name, pgrammar::kernel_where>>;

}  // namespace fusor::dsl
