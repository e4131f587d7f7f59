// The PEGTL grammar of rule files (`*.rules`). docs/rules-reference.md describes the language;
// this file is its exact syntax. Whitespace, newlines and `#` comments separate tokens anywhere.
//
// Conventions:
// - Rules named `expect_*` carry an error message (grammar_errors.h): when one fails, parsing stops with
//   "expected ..." at that position, and the parser recovers at the next top-level keyword.
// - The parse tree keeps only the rules listed in parse_tree.h; ast_builder.cpp turns
//   it into the typed AST.
#pragma once
#include <tao/pegtl.hpp>

namespace fusor::dsl::grammar {

namespace p = tao::pegtl;

// ---------------------------------------------------------------- lexical

struct comment : p::seq<p::one<'#'>, p::until<p::eolf>> {};
struct sp : p::sor<p::space, comment> {};
struct ws : p::star<sp> {};
// Blanks within one line (the version line).
struct blanks : p::star<p::blank> {};

struct ident_first : p::ranges<'a', 'z', 'A', 'Z', '_'> {};
struct ident_other : p::ranges<'a', 'z', 'A', 'Z', '0', '9', '_'> {};
struct identifier : p::seq<ident_first, p::star<ident_other>> {};

struct kw_rule : TAO_PEGTL_KEYWORD("rule") {};
struct kw_pattern : TAO_PEGTL_KEYWORD("pattern") {};
struct kw_import : TAO_PEGTL_KEYWORD("import") {};
struct kw_level : TAO_PEGTL_KEYWORD("level") {};
struct kw_providers : TAO_PEGTL_KEYWORD("providers") {};
struct kw_benefit : TAO_PEGTL_KEYWORD("benefit") {};
struct kw_match : TAO_PEGTL_KEYWORD("match") {};
struct kw_where : TAO_PEGTL_KEYWORD("where") {};
struct kw_rewrite : TAO_PEGTL_KEYWORD("rewrite") {};
struct kw_test : TAO_PEGTL_KEYWORD("test") {};
struct kw_const : TAO_PEGTL_KEYWORD("const") {};
struct kw_none : TAO_PEGTL_KEYWORD("none") {};
struct kw_tolerance : TAO_PEGTL_KEYWORD("tolerance") {};
struct kw_in : TAO_PEGTL_KEYWORD("in") {};

// A name: an identifier other than the operator keyword `in` and the wildcard `_`.
struct wildcard : p::seq<p::one<'_'>, p::not_at<ident_other>> {};
struct name : p::seq<p::not_at<kw_in>, p::not_at<wildcard>, identifier> {};

struct digits : p::plus<p::digit> {};
struct exponent : p::seq<p::one<'e', 'E'>, p::opt<p::one<'+', '-'>>, digits> {};
struct float_lit : p::seq<p::sor<p::seq<digits, p::one<'.'>, p::not_at<p::one<'.'>>, p::star<p::digit>, p::opt<exponent>>,
                                 p::seq<digits, exponent>>,
                          p::not_at<ident_first>> {};
struct int_lit : p::seq<digits, p::not_at<ident_first>> {};
struct number : p::sor<float_lit, int_lit> {};

struct string_char : p::sor<p::seq<p::one<'\\'>, p::one<'"', '\\', 'n', 't'>>, p::not_one<'"', '\\', '\n'>> {};
struct string_body : p::star<string_char> {};
struct expect_string_end : p::one<'"'> {};
struct string_lit : p::seq<p::one<'"'>, string_body, expect_string_end> {};

// ---------------------------------------------------------------- expressions

struct expr;
struct expect_expr : p::seq<expr> {};
struct arith_expr;

// `Conv`, `fusor.FusedConv`, `com.microsoft.Attention`.
struct op_name : p::seq<identifier, p::star<p::one<'.'>, p::not_at<p::one<'.'>>, identifier>> {};
struct alt_sep : p::seq<ws, p::one<'|'>, p::not_at<p::one<'|'>>, ws> {};
struct expect_op_name : p::seq<op_name> {};
struct alternation : p::seq<op_name, p::star<alt_sep, expect_op_name>> {};

// Attribute values stop below the comparisons, so `>` closes the list: `<axes = [-1]>`.
struct expect_attr_value : p::seq<arith_expr> {};
struct attr_set : p::seq<name, ws, p::one<'='>, p::not_at<p::one<'='>>, ws, expect_attr_value> {};
struct expect_spread_name : p::seq<name> {};
struct attr_spread : p::seq<p::string<'.', '.', '.'>, ws, expect_spread_name> {};
struct attr_item : p::sor<attr_spread, attr_set> {};
struct expect_attr_item : p::seq<attr_item> {};
struct expect_attr_close : p::one<'>'> {};
// Nothing commits before the first item, so `a < b` stays a comparison.
struct attr_list : p::seq<p::one<'<'>, ws, attr_item, ws, p::star<p::one<','>, ws, expect_attr_item, ws>, expect_attr_close> {};

struct optional_arg : p::seq<name, ws, p::one<'?'>, p::not_at<p::one<'?'>>> {};
struct variadic_arg : p::seq<name, ws, p::string<'.', '.', '.'>> {};
struct wildcard_arg : p::seq<wildcard> {};
struct arg : p::sor<variadic_arg, optional_arg, wildcard_arg, expr> {};
struct expect_arg : p::seq<arg> {};
struct expect_args_close : p::one<')'> {};
struct call_args : p::seq<p::one<'('>, ws, p::opt<arg, ws, p::star<p::one<','>, ws, expect_arg, ws>>, expect_args_close> {};

// A cheap lookahead (no parse-tree nodes) so that plain names do not start a call attempt.
struct call_start : p::seq<identifier, p::star<p::one<'.'>, p::not_at<p::one<'.'>>, identifier>, ws,
                           p::sor<p::one<'('>, p::one<'<'>, p::seq<p::one<'|'>, p::not_at<p::one<'|'>>>>> {};
struct call : p::seq<p::at<call_start>, alternation, ws, p::opt<attr_list, ws>, call_args> {};

struct expect_list_close : p::one<']'> {};
struct list_lit : p::seq<p::one<'['>, ws, p::opt<expr, ws, p::star<p::one<','>, ws, expect_expr, ws>>, expect_list_close> {};
struct expect_paren_close : p::one<')'> {};
struct paren_expr : p::seq<p::one<'('>, ws, expect_expr, ws, expect_paren_close> {};

struct primary : p::sor<number, string_lit, list_lit, paren_expr, call, name> {};

struct expect_member : p::seq<identifier> {};
struct member_suffix : p::seq<p::one<'.'>, p::not_at<p::one<'.'>>, expect_member> {};
struct expect_index_close : p::one<']'> {};
struct index_suffix : p::seq<p::one<'['>, ws, expect_expr, ws, expect_index_close> {};
struct postfix_expr : p::seq<primary, p::star<p::sor<member_suffix, index_suffix>>> {};

struct unary_expr;
struct not_op : p::seq<p::one<'!'>, p::not_at<p::one<'='>>> {};
struct neg_op : p::one<'-'> {};
struct expect_unary : p::seq<unary_expr> {};
struct unary_expr : p::sor<p::seq<not_op, ws, expect_unary>, p::seq<neg_op, ws, expect_unary>, postfix_expr> {};

// Binary operators. The grammar reads an operand-operator chain flat; ast_builder.cpp gives it
// precedence (loosest first: ||, &&, comparisons and `in`, + -, * / %, ??), which keeps the
// parse tree small. Attribute values stop before comparisons, so `>` closes the list.
struct coalesce_op : p::string<'?', '?'> {};
struct mul_op : p::one<'*', '/', '%'> {};
struct add_op : p::one<'+', '-'> {};
struct cmp_op : p::sor<p::string<'=', '='>, p::string<'!', '='>, p::string<'<', '='>, p::string<'>', '='>,
                       p::one<'<'>, p::one<'>'>, kw_in> {};
struct and_op : p::string<'&', '&'> {};
struct or_op : p::string<'|', '|'> {};
struct binary_op : p::sor<or_op, and_op, cmp_op, coalesce_op, add_op, mul_op> {};
struct arith_op : p::sor<coalesce_op, add_op, mul_op> {};
struct expect_operand : p::seq<unary_expr> {};
struct expr : p::seq<unary_expr, p::star<ws, binary_op, ws, expect_operand>> {};
struct arith_expr : p::seq<unary_expr, p::star<ws, arith_op, ws, expect_operand>> {};

// ---------------------------------------------------------------- statements and blocks

struct lhs_name : p::sor<wildcard, name> {};
struct expect_lhs_name : p::seq<lhs_name> {};
struct outputs : p::seq<lhs_name, p::star<ws, p::one<','>, ws, expect_lhs_name>> {};
struct assign : p::seq<p::one<'='>, p::not_at<p::one<'='>>> {};
struct statement : p::seq<outputs, ws, assign, ws, expect_expr> {};
struct semi : p::one<';'> {};
struct statements : p::star<statement, ws, p::opt<semi, ws>> {};

struct expect_open_brace : p::one<'{'> {};
struct expect_stmt_close : p::one<'}'> {};
struct match_block : p::seq<kw_match, ws, expect_open_brace, ws, statements, expect_stmt_close> {};
struct rewrite_block : p::seq<kw_rewrite, ws, expect_open_brace, ws, statements, expect_stmt_close> {};
struct expect_where_close : p::one<'}'> {};
struct where_block : p::seq<kw_where, ws, expect_open_brace, ws, p::star<expr, ws, p::opt<semi, ws>>, expect_where_close> {};

// test { x: float[1, 8, 16, 16]; w: const float[8, 8, 3, 3]; b: none; t.perm = [0, 2, 1]; tolerance 1e-4 }
struct dim : p::seq<int_lit> {};
struct expect_dim : p::seq<dim> {};
struct expect_dims_close : p::one<']'> {};
struct dims : p::seq<p::one<'['>, ws, p::opt<dim, ws, p::star<p::one<','>, ws, expect_dim, ws>>, expect_dims_close> {};
struct expect_dims : p::seq<dims> {};
struct dtype_name : p::seq<identifier> {};
struct expect_dtype : p::seq<dtype_name> {};
struct const_mark : p::seq<kw_const> {};
struct absent_mark : p::seq<kw_none> {};
struct test_value : p::seq<p::one<'='>, ws, expect_expr> {};
struct test_input : p::seq<name, ws, p::one<':'>, ws,
                           p::sor<absent_mark, p::seq<p::opt<const_mark, ws>, expect_dtype, ws, expect_dims, p::opt<ws, test_value>>>> {};
struct test_attr_name : p::seq<identifier> {};
struct test_attr : p::seq<name, p::one<'.'>, test_attr_name, ws, p::one<'='>, ws, expect_expr> {};
struct expect_tolerance : p::seq<number> {};
struct test_tolerance : p::seq<kw_tolerance, ws, expect_tolerance> {};
struct test_item : p::sor<test_attr, test_input, test_tolerance> {};
struct expect_test_close : p::one<'}'> {};
struct test_name : p::seq<name> {};
struct test_block : p::seq<kw_test, ws, p::opt<test_name, ws>, expect_open_brace, ws,
                           p::star<test_item, ws, p::opt<semi, ws>>, expect_test_close> {};

// ---------------------------------------------------------------- declarations

struct expect_rule_name : p::seq<name> {};
struct level_name : p::seq<identifier> {};
struct expect_level_name : p::seq<level_name> {};
struct level_clause : p::seq<kw_level, ws, expect_level_name> {};
struct provider_name : p::seq<name> {};
struct expect_provider_name : p::seq<provider_name> {};
struct providers_clause : p::seq<kw_providers, ws, expect_provider_name, p::star<ws, p::one<','>, ws, expect_provider_name>> {};
struct benefit_value : p::seq<int_lit> {};
struct expect_benefit : p::seq<benefit_value> {};
struct benefit_clause : p::seq<kw_benefit, ws, expect_benefit> {};
struct rule_clause : p::sor<level_clause, providers_clause, benefit_clause> {};
struct expect_match : p::seq<match_block> {};
struct expect_rewrite : p::seq<rewrite_block> {};
struct rule_decl : p::seq<kw_rule, ws, expect_rule_name, ws, p::star<rule_clause, ws>, expect_match, ws,
                          p::opt<where_block, ws>, expect_rewrite, p::star<ws, test_block>> {};

struct param : p::seq<name> {};
struct expect_param : p::seq<param> {};
struct expect_params_close : p::one<')'> {};
struct param_list : p::seq<p::one<'('>, ws, p::opt<param, ws, p::star<p::one<','>, ws, expect_param, ws>>, expect_params_close> {};
struct expect_param_list : p::seq<param_list> {};
struct pattern_body : p::seq<p::one<'{'>, ws, statements, expect_stmt_close> {};
struct expect_pattern_body : p::seq<pattern_body> {};
struct expect_pattern_name : p::seq<name> {};
struct pattern_decl : p::seq<kw_pattern, ws, expect_pattern_name, ws, expect_param_list, ws, expect_pattern_body,
                             p::star<ws, p::one<'|'>, ws, expect_pattern_body>> {};

struct expect_import_path : p::seq<string_lit> {};
struct import_decl : p::seq<kw_import, ws, expect_import_path> {};

struct top_item : p::sor<rule_decl, pattern_decl, import_decl> {};

// `fusor-rules 1`
struct version_number : p::seq<int_lit> {};
struct expect_version_number : p::seq<version_number> {};
struct version_line : p::seq<TAO_PEGTL_STRING("fusor-rules"), blanks, expect_version_number> {};

}  // namespace fusor::dsl::grammar
