// Semantic checks of a provider definition: layout, levels, rule files present, kernel ops
// known (ONNX schemas at the target opset, fusor's catalog), kernel conditions well-typed.
#pragma once
#include "dsl/diagnostics.h"
#include "dsl/provider.h"
#include "dsl/rules.h"

namespace fusor::dsl {

void check_provider(ProviderDef& def, const CheckOptions& opts, Diagnostics& diags);

}  // namespace fusor::dsl
