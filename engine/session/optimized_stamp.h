// What fusor records in a model it optimized (ModelProto.metadata_props), and the checks that read it.
//
//   fusor.provider       the provider the fused ops were chosen for (the first of the list)
//   fusor.providers      the whole priority list, comma-separated
//   fusor.level          the highest level the model was optimized at
//   fusor.rule_set_hash  rule_set_hash() of the last optimization (engine/session/rule_set_hash.h)
//   fusor.version        the engine version that wrote it
//
// A model stamped for provider P is refused (BadInput, exit 2) by a session whose provider list
// does not contain P: its fused ops and layout were chosen for P's kernels. Re-optimizing a
// stamped model for a list that contains P is allowed and updates the stamp.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "engine/session/optimize.h"

namespace fusor {

inline constexpr const char* kMetaProvider = "fusor.provider";
inline constexpr const char* kMetaProviders = "fusor.providers";
inline constexpr const char* kMetaLevel = "fusor.level";
inline constexpr const char* kMetaRuleSetHash = "fusor.rule_set_hash";
inline constexpr const char* kMetaVersion = "fusor.version";

struct OptimizedStamp {
  std::string provider, providers, level, rule_set_hash, version;
};

// The engine version compiled in ("0.1.0").
const char* engine_version();

// nullopt when the model carries no fusor.provider entry.
std::optional<OptimizedStamp> read_stamp(const Model& model);

// Throws Error(BadInput) when the model is stamped for a provider outside `providers`.
void check_stamp_provider(const Model& model, const std::vector<std::string>& providers);

// Whether any node, at any depth, is in the fusor domain.
bool has_fusor_ops(const Graph& graph);

// Adds the `fusor` opset import (kFusorOpsetVersion) when the graph holds fusor ops and updates
// the stamp (level only goes up). No-op at level disabled.
void stamp_optimized(Model& model, const OptimizeOptions& options, const std::string& rule_set_hash);

}  // namespace fusor
