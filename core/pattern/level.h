// Optimization levels, as in ONNX Runtime (each includes the ones before it): the one level enum
// of the project, for an optimization run (OptimizeOptions::level, --level) and for a rule
// (`level extended` in a rule file, Rule::level, a provider's `rules extended: ...`).
//   disabled  load and save, nothing else (never a rule's level);
//   basic     semantics-preserving cleanups (constant folding, identity/dead-node removal, ...);
//   extended  fusions into fusor-domain ops with fused kernels;
//   layout    NCHW -> NHWC/blocked layout for the selected provider;
//   all       everything.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace fusor {

enum class OptLevel { Disabled, Basic, Extended, Layout, All };

// "disabled" | "basic" | "extended" | "layout" | "all"
const char* opt_level_name(OptLevel level);
// "disabled, basic, extended, layout, all"
std::string opt_level_names();
// The level named `text`, nullopt when none is.
std::optional<OptLevel> find_opt_level(std::string_view text);
// The same, throwing Error(Usage) listing the levels when none is.
OptLevel parse_opt_level(std::string_view text);
// A rule's level (`level extended`): any level but disabled; nullopt otherwise.
std::optional<OptLevel> parse_rule_level(std::string_view text);

}  // namespace fusor
