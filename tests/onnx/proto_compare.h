// Semantic comparison of an original ModelProto with the one fusor saved, independent of fusor's
// own conversion code: tensors are decoded here from whichever field the original used.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>

namespace fusor::test {

// Empty when `saved` keeps everything the round trip promises of `orig`: opsets, IR version,
// producer, metadata, and per graph (recursively) nodes in order with names, domains, doc
// strings and attributes, initializers (bit-exact), inputs and outputs with their types, and the
// fields fusor does not model. Otherwise the first difference.
std::string compare_models(const onnx::ModelProto& orig, const onnx::ModelProto& saved);

}  // namespace fusor::test
