// Presentation of model statistics for the CLI: JSON values (keys as docs/cli.md defines them)
// and human-readable text.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "core/util/bytes_text.h"
#include "engine/session/model_stats.h"
#include "core/util/json.h"

namespace fusor::cli {

// [1, 3, "N", null]: known dims as numbers, symbolic ones as their name, unknown as null.
json::Value shape_json(const IoStats& io);
// {"name", "type", "shape"}; shape is null when the rank is unknown.
json::Value io_json(const IoStats& io);
// {"ai.onnx": 13, ...}: the default domain written "ai.onnx".
json::Value opsets_json(const std::vector<OpsetImport>& opsets);

// "[N,3,224,224]", "[?]" for unknown rank, "?" for an unknown dim.
std::string shape_text(const IoStats& io);
// Byte counts are shown with fusor::bytes_text (core/util/bytes_text.h): "4.7 MiB", "512 B".

// A right-aligned two-column histogram sorted by count (descending), then name.
void print_histogram(std::ostream& out, const std::map<std::string, int64_t>& ops, const std::string& indent = "  ");
// op | before | after, over the union of ops, sorted by before-count.
void print_histogram_diff(std::ostream& out, const std::map<std::string, int64_t>& before,
                          const std::map<std::string, int64_t>& after);
// "12.3 ms"
std::string ms_text(double ms);
// Milliseconds rounded to 3 decimals, for JSON.
double round_ms(double ms);

}  // namespace fusor::cli
