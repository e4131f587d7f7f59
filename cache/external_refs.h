// The external-data files a serialized ModelProto refers to, found by walking the protobuf wire
// format (no parse, no copies: the weight bytes are skipped), so the cache key can cover the
// side files' contents on every lookup at the cost of hashing them, not of loading the model.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusor::cache {

// The `location` of every TensorProto with external_data in the main graph and every subgraph
// (initializers and tensor attributes), sorted and unique. nullopt when the bytes are not a
// well-formed ModelProto (the loader reports that; the cache stays out of the way).
std::optional<std::vector<std::string>> external_data_locations(std::string_view model_bytes);

}  // namespace fusor::cache
