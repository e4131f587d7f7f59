// RunControl: how a host stops a run that takes too long (a Loop with a trip count of 10^12, a
// model far slower than expected). The executor checks it before every node and at the start of
// every subgraph run (each Loop/Scan iteration, each If branch), and throws
// Error(ErrorKind::Cancelled) naming the node it stopped at. A single kernel is not interrupted:
// a cancellation takes effect at the next node boundary.
//
// `terminate` is the host's flag (ONNX Runtime's RunOptions.terminate): set it from any thread.
// `deadline` stops the run at a time (the CLI's --timeout). Both are optional; a check costs an
// atomic load and, with a deadline, a clock read.
#pragma once
#include <atomic>
#include <chrono>
#include <string>

namespace fusor {

struct RunControl {
  using Clock = std::chrono::steady_clock;
  const std::atomic<bool>* terminate = nullptr;
  Clock::time_point deadline = Clock::time_point::max();
  std::string deadline_reason = "the run's time limit expired";  // what a deadline stop says

  // Throws Error(Cancelled) "WHERE: run cancelled: REASON" when the flag is set or the deadline
  // has passed.
  void check(const std::string& where) const;
};

}  // namespace fusor
