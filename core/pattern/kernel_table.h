// A provider's kernel declarations as data for the engine (issue 7): which ops the provider's
// kernels run, some only in some forms. The dsl front end lowers a provider definition's
// `kernels { ... }` block into this table (dsl/provider.h); engine/rewrite/kernel_gate.h asks it
// about every node a rewrite creates.
//
// A condition is an Expr of the one expression language (expr.h) over two vars: kNodeVar, the
// node's first output (so `activation` is Expr{AttrRead, kNodeVar, "activation"}), and
// kInputVar, its first input (`input_dtype` is Expr{DType, kInputVar}, `input_rank`
// Expr{Rank, kInputVar}).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/ir/symbol.h"
#include "core/pattern/expr.h"

namespace fusor {

struct KernelEntry {
  OpType op;
  std::optional<Expr> when;  // none: every form of the op
  std::string when_text;     // the condition as written (messages)
  std::string location;      // "providers/xnnpack.provider:16"
};

struct KernelTable {
  std::string provider;
  std::vector<KernelEntry> entries;  // empty: the provider runs every op fusor has a kernel for

  static constexpr int kNodeVar = 0;
  static constexpr int kInputVar = 1;

  bool restricts() const { return !entries.empty(); }
  // The declarations for `op`, in file order; empty when the provider cannot run it.
  std::vector<const KernelEntry*> for_op(OpType op) const {
    std::vector<const KernelEntry*> out;
    for (const KernelEntry& d : entries)
      if (d.op == op) out.push_back(&d);
    return out;
  }
};

}  // namespace fusor
