// The PEGTL grammar of provider definitions (`providers/NAME.provider`); the format is in
// docs/rules-reference.md, "Providers". Expressions (kernel constraints) are the rule
// language's (grammar.h).
//
//   fusor-provider 1
//   layout NHWC
//   rules basic: basic.rules
//   rules extended: fusions_clamp.rules, "my rules.rules"
//   kernels {
//     Conv; MaxPool, AveragePool
//     fusor.FusedConv where activation in ["", Relu, Clip]
//   }
#pragma once
#include "dsl/grammar.h"

namespace fusor::dsl::pgrammar {

namespace p = tao::pegtl;
using namespace grammar;

struct kw_layout : TAO_PEGTL_KEYWORD("layout") {};
struct kw_rules : TAO_PEGTL_KEYWORD("rules") {};
struct kw_kernels : TAO_PEGTL_KEYWORD("kernels") {};

struct layout_name : p::seq<identifier> {};
struct expect_layout_name : p::seq<layout_name> {};
struct layout_decl : p::seq<kw_layout, ws, expect_layout_name> {};

struct bare_path : p::plus<p::sor<p::ranges<'a', 'z', 'A', 'Z', '0', '9'>, p::one<'_', '.', '/', '-'>>> {};
struct file_name : p::sor<string_lit, bare_path> {};
struct expect_file_name : p::seq<file_name> {};
struct expect_colon : p::one<':'> {};
struct rules_decl : p::seq<kw_rules, ws, expect_level_name, ws, expect_colon, ws, expect_file_name,
                           p::star<ws, p::one<','>, ws, expect_file_name>> {};

struct kernel_where : p::seq<kw_where, ws, expect_expr> {};
struct kernel_decl : p::seq<op_name, p::opt<ws, kernel_where>> {};
struct kernel_sep : p::one<';', ','> {};
struct expect_kernels_close : p::one<'}'> {};
struct kernels_decl : p::seq<kw_kernels, ws, expect_open_brace, ws, p::star<kernel_decl, ws, p::opt<kernel_sep, ws>>,
                             expect_kernels_close> {};

struct provider_item : p::sor<layout_decl, rules_decl, kernels_decl> {};

struct provider_version : p::seq<TAO_PEGTL_STRING("fusor-provider"), blanks, expect_version_number> {};

}  // namespace fusor::dsl::pgrammar
