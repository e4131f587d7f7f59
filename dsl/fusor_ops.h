// fusor's own ops (domain "fusor") as the rule checks see them: the catalog table of
// core/ops/fusor_ops.h (the single source of truth, also behind the ONNX schemas) parsed into
// the DSL's OpInfo.
#pragma once
#include <string>
#include <vector>

#include "dsl/op_catalog.h"
#include "core/ops/fusor_ops.h"

namespace fusor::dsl {

using fusor::FusorOpSpec;
using fusor::fusor_op_specs;
using fusor::kFusorOpsetVersion;

// The table parsed into OpInfo (domain "fusor"), in table order.
const std::vector<OpInfo>& fusor_ops();
const OpInfo* find_fusor_op(const std::string& name);

}  // namespace fusor::dsl
