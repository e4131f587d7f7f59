// The catalog of fusor's own ops (domain "fusor"): one table of data, used by the rule checks
// here and by whoever registers ONNX schemas and kernels for these ops.
//
// Each entry is written in a compact signature syntax:
//   inputs/outputs  "X:T W:T B?:T"      NAME[?|...]:TYPE  (? optional, ... variadic)
//   types           "T=float,float16,double; M=float,bool"
//   attrs           "group:int=1 kernel_shape:ints strides:ints axis:int! activation:string="
//                   NAME:KIND[=DEFAULT] or NAME:KIND! for a required attribute;
//                   KIND is float, int, string, floats, ints, strings or tensor.
#pragma once
#include <string>
#include <vector>

#include "dsl/op_catalog.h"

namespace fusor::dsl {

struct FusorOpSpec {
  const char* name;
  const char* inputs;
  const char* outputs;
  const char* types;
  const char* attrs;
  const char* doc;
};

inline constexpr int kFusorOpsetVersion = 1;

const std::vector<FusorOpSpec>& fusor_op_specs();
// The table parsed into OpInfo (domain "fusor"), in table order.
const std::vector<OpInfo>& fusor_ops();
const OpInfo* find_fusor_op(const std::string& name);

}  // namespace fusor::dsl
