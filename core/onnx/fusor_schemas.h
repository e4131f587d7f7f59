// ONNX schemas for fusor's own ops (domain "fusor", opset 1), generated from the op catalog
// (core/ops/fusor_ops.h), so that libonnx's shape inference and checker see through fused
// graphs: inputs, outputs, type constraints, attributes with defaults, and a type and shape
// inference function per op (Conv/Gemm/MatMul/pool-like ones delegate to ONNX's own functions,
// NHWC forms through a permuted view of their data input and output).
#pragma once

namespace fusor {

// Registers the domain's version range and every fusor op's schema with libonnx's global
// registry. Idempotent and thread-safe; called by the ONNX import/inference paths before they
// use the registry (and before shape inference forks its child), callable by anyone else who
// runs onnx::checker or onnx::shape_inference on fused models.
void register_fusor_schemas();

}  // namespace fusor
