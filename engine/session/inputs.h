// Model inputs for `fusor run` / `fusor bench`: tensors read from files, and seeded random data
// for the rest, shaped as the model declares (after --dim/--shape overrides).
//
// - Floating-point inputs: uniform in [lo, hi) (--range, default 0,1).
// - Integer inputs: uniform in [int_lo, int_hi] inclusive (--int-range, default 0,9).
// - Bool inputs: true or false with equal odds.
// - --value NAME=V fills every element of that input with V.
// - A symbolic or unknown dim that no override set is 1, with a warning naming input and dim.
// The generator is a fixed splitmix64 stream per input (seed, input position), so the same seed
// gives the same data on every machine and standard library.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/exec/executor.h"
#include "core/ir/graph.h"

namespace fusor {

struct InputOptions {
  uint64_t seed = 0;
  double lo = 0, hi = 1;
  int64_t int_lo = 0, int_hi = 9;
  std::vector<std::pair<std::string, double>> values;  // --value NAME=V
};

// "LO,HI" -> (LO, HI); Usage error (naming `flag`) on bad text or LO > HI.
std::pair<double, double> parse_range(const std::string& text, const std::string& flag);
// "NAME=V" -> (NAME, V); Usage error on bad text.
std::pair<std::string, double> parse_value_flag(const std::string& text);

// The inputs of `graph` that `given` lacks (graph inputs without an initializer), generated per
// `opts`, appended to `given`. Checks that every name in `given` and in opts.values is an input
// (Usage error otherwise). Warnings (unset symbolic dims) are appended to *warnings.
void complete_inputs(const Graph& graph, NamedTensors& given, const InputOptions& opts,
                     std::vector<std::string>* warnings);

// Reads `--input NAME=FILE` (a .pb TensorProto or .npy); BadInput naming the file when it is not a
// tensor. A bare FILE (no NAME=) takes the name stored in the TensorProto.
std::pair<std::string, Tensor> read_named_input(const std::string& spec);

}  // namespace fusor
