// Facts about ops that the rewrite engine needs beyond their schemas, in one table (like
// tinygrad's GroupOp): which ops are commutative, n-ary, windowed, deterministic; how their axes
// are counted; which inputs the normal form holds as attributes. The matcher, the normal form,
// constant folding, CSE and the rewriter ask op_traits(op) instead of keeping their own op lists.
//
// Adding an op family: its signature (fusor ops: fusor_ops.cpp, with its shape rule), a traits
// entry here when any fact differs from the defaults, its kernel, and its rules. An op missing
// from the table has the default traits (not commutative, deterministic, ...), which is always
// safe: a commutative op left out only matches in the written operand order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/symbol.h"

namespace fusor {

// An input slot the normal form holds as an attribute when it is a constant (Clip's min/max,
// the axes of Reduce*/Squeeze/Unsqueeze): older or newer opsets spell it as an attribute.
struct LiftedInput {
  size_t slot = 0;
  const char* attr = "";
  int64_t input_since = 0;  // the first ONNX opset that spells it as an input
};

struct OpTraits {
  // Binary and commutative: a pattern matches either operand order (Add, Mul, Equal, ...).
  bool commutative = false;
  // Variadic and order-free (Sum, Max, Min, Mean): a pattern's inputs match any subset of the
  // node's inputs in any order.
  bool nary_set = false;
  // Slides a window over spatial axes; omitted `pads` mean zeros on every spatial axis (Conv,
  // the pools, fusor's conv and pool ops).
  bool windowed = false;
  // False for random ops: never folded, never deduplicated.
  bool deterministic = true;
  // `axis`/`axes` count the output's dimensions, not input 0's (Unsqueeze).
  bool axes_of_output = false;
  // `v.attrs` of this op, as a fused activation's parameters, is [min, max] with the infinities
  // for an absent bound (Clip), not its numeric attributes by name.
  bool bounds_as_params = false;
  std::vector<LiftedInput> lifted = {};
  // Takes or makes sequence or optional values (core/ir TypeKind), which are never constants:
  // constant folding leaves it alone, and rules match no node that reads or writes such a value.
  bool non_tensor_values = false;
  // Constant folding keeps this op's result when it is at most this many times the bytes of its
  // constant inputs, whatever its size budget (FoldOptions::max_bytes). A weight transform that
  // grows the weights by a known factor (fusor.WinogradFilter: 4) says so here; 1 for the rest,
  // so an Expand or Tile never turns a small constant into a large one.
  int fold_growth = 1;
};

// The traits of `op` (the defaults for an op the table does not list). Thread-safe.
const OpTraits& op_traits(OpType op);

// The attribute input `slot` of `op` is lifted to ("min" for Clip's slot 1); nullopt when the
// slot is a plain input.
std::optional<std::string> lifted_input_attr(OpType op, size_t slot);
// Whether ONNX opset `opset` spells the lifted attribute `attr` of `op` as an input.
bool lifted_as_input(OpType op, const std::string& attr, int64_t opset);

}  // namespace fusor
