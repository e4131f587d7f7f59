// The random numbers of the ops that draw them (RandomUniform, RandomNormal, their *Like forms,
// Bernoulli, training-mode Dropout): one stream per node, the same stream numpy's legacy
// generator gives (`numpy.random.RandomState(seed)`), documented for users in docs/cli.md.
//
// Contract: a node with a `seed` attribute (an int for Dropout, a float for the others; rounded to
// an integer, taken modulo 2^32 as numpy's seeding does) yields the same values on its k-th run in
// every session and on every machine; without one the stream is seeded from std::random_device
// when the kernel is made. The generator is the 32-bit Mersenne Twister (std::mt19937, whose
// output sequence and integer seeding the C++ standard fixes, and which numpy's `seed(int)` seeds
// identically). A uniform double in [0, 1) takes two draws a, b and is
// ((a >> 5) * 2^26 + (b >> 6)) * 2^-53, numpy's `random_sample`, so `uniform()` equals
// `RandomState(seed).uniform(0, 1, n)` value by value. Normal values are Box-Muller on two
// uniforms (not numpy's polar method). Callers hold mutex() while they draw, so concurrent runs of
// a session each get their own stretch of the stream.
#pragma once
#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>

#include "core/ir/graph.h"

namespace fusor {

class RandomStream {
 public:
  explicit RandomStream(const Node& n) {
    const Attribute* s = n.attr("seed");
    if (!s) {
      gen_.seed(std::random_device{}());
      return;
    }
    const double v = s->kind == AttrKind::Int ? static_cast<double>(s->i) : static_cast<double>(s->f);
    // Modulo 2^32 for the seeds numpy accepts; a negative or huge one still gives a fixed stream.
    gen_.seed(static_cast<uint32_t>(static_cast<uint64_t>(std::llround(v))));
  }
  double uniform() {
    const uint32_t a = static_cast<uint32_t>(gen_() >> 5), b = static_cast<uint32_t>(gen_() >> 6);
    return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) * 0x1.0p-53;
  }
  double normal() {
    // Box-Muller on (0, 1] x [0, 1): the first factor never takes log(0).
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::mutex& mutex() { return mu_; }

 private:
  std::mt19937 gen_;
  std::mutex mu_;
};

}  // namespace fusor
