// Runs two versions of a model (before and after a rewrite) on the same seeded random inputs
// and measures how far their outputs are apart.
//
// The measure, per element: |after - before| / max(1, |before|), the absolute difference for
// values up to 1 in magnitude and the relative one above, so one tolerance serves outputs near
// zero and large activations alike. NaN in both at one place counts as equal (so does the same
// infinity); NaN or infinity in one only is an infinite difference. Outputs are compared by
// position; a different count, shape or element type is a `problem` (infinite difference).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/ruletest/test_values.h"

namespace fusor::ruletest {

struct Difference {
  double error = 0;     // the largest per-element measure above
  double max_abs = 0;   // the largest |after - before|
  std::string worst;    // where `error` was met: "output 'y'[3]: 1.5 after, 2.5 before"; "" when equal
  std::string problem;  // why the outputs cannot be compared; "" when they can
};

Difference compare_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& before,
                           const std::vector<Tensor>& after);

// Random data for the graph's inputs that have no initializer (symbolic dims are 1; each such
// dim adds a line to *warnings).
NamedTensors random_inputs(const Graph& g, uint64_t seed, const RandomRange& range, std::vector<std::string>* warnings);

// Plans and runs the model on `inputs` (single-threaded when `threads` is 1).
std::vector<Tensor> run_model(const Model& m, const NamedTensors& inputs, int threads = 1);

std::vector<std::string> output_names(const Graph& g);

}  // namespace fusor::ruletest
