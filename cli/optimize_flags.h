// Flags shared by the subcommands that load and optimize a model (optimize, run, bench), so they
// spell and validate them identically.
//
//   add_shape_flags / parse_shape_flags        --dim NAME=V, --shape INPUT=AxBxC (repeatable)
//   add_optimize_flags / parse_optimize_flags  the shape flags plus --level, --provider and the
//                                              rule flags --rules, --no-default-rules, --disable, --trace,
//                                              and the cache flags --cache, --no-cache, --cache-max-mb
//
// Bad values are usage errors (exit 1): an unknown level or provider (the message lists the
// known ones), a malformed --dim/--shape. An unknown --disable name is reported by optimize()
// (it knows the loaded rules).
#pragma once
#include "cli/args.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/optimize.h"
#include "engine/session/optimize_cached.h"

namespace fusor::cli {

void add_shape_flags(ArgParser& p);
ShapeOverrides parse_shape_flags(const Args& args);

struct OptimizeFlags {
  OptimizeOptions options;
  ShapeOverrides overrides;
  CacheOptions cache;  // --cache FILE, --no-cache, --cache-max-mb N
};

// `default_level` is shown in --help and used when --level is absent.
void add_optimize_flags(ArgParser& p, OptLevel default_level = OptLevel::All);
OptimizeFlags parse_optimize_flags(const Args& args, OptLevel default_level = OptLevel::All);

}  // namespace fusor::cli
