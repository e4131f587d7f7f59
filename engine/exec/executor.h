// Runs a model's ExecPlan.
//
// Memory (per run):
// - Intermediates live in one arena per run context, at the offsets of the plan's MemoryState;
//   scratch (KernelContext::scratch) is a bump region after the tensors, reset at every step.
// - A tensor that does not fit its planned place (dynamic shapes larger than planned, an in-place
//   pair whose sizes differ at run time, a declared view the kernel did not make) gets a heap
//   buffer instead; the run's observed sizes then go to ExecPlan::record_run, which re-plans, and
//   the next run grows its arena once. A run whose tensors all fit allocates nothing.
// - Graph outputs are never in the arena: they are allocated from the run context's BufferPool
//   and returned as owned Tensors (the caller may keep them; once it drops them, the buffers
//   return to the pool). Outputs that are graph inputs, constants or views are copied into pool
//   buffers. Subgraph outputs (run_subgraph) come from the same pool.
//
// allocs_per_run (RunStats::allocs) counts system allocations of tensor data and scratch made by
// the executor during the run: arena growth, heap fallbacks for tensors and scratch, pool misses
// for graph/subgraph outputs, and a new run context. It does not count small metadata
// allocations (Tensor shape vectors, std::vector bookkeeping) nor allocations inside kernels.
//
// Concurrency: run() may be called from several threads at once. Each call takes a run context
// (arena, slot table, buffer pool) from a pool of idle contexts, or makes a new one when all are
// busy, and gives it back afterwards; contexts are never shared between concurrent runs. Kernels
// are read-only after construction. The intra-op ThreadPool is shared: a run that finds it busy
// runs its parallel loops on its own thread.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/exec/plan.h"
#include "engine/exec/run_control.h"
#include "core/ir/model.h"
#include "kernels/thread_pool.h"

namespace fusor {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct NodeTiming {
  std::string name;   // node name (or output name when the node has none)
  std::string op;
  int depth = 0;      // 0 for the main graph, +1 per subgraph level
  double start_us = 0, dur_us = 0;
};

struct RunStats {
  int64_t allocs = 0;          // see the header comment
  int64_t fallbacks = 0;       // tensors or scratch that did not fit the plan (subset of allocs)
  std::vector<NodeTiming> profile;  // when ExecOptions::profile is set
};

struct MemoryReport {
  size_t arena_bytes = 0;    // tensor arenas of the main plan and every subgraph plan
  size_t scratch_bytes = 0;  // planned scratch regions
  size_t naive_bytes = 0;    // every intermediate in its own buffer, no reuse
  int buffers = 0;           // distinct arena buffers after reuse
  int intermediates = 0;     // values placed
  int inplace = 0;           // values written in place over a dying input
};

class Executor {
 public:
  // The graph (and model) must outlive the executor. Builds the plan (kernels are created here:
  // an op without a kernel throws BadInput naming the node).
  Executor(const Model& model, ExecOptions opts = {});
  Executor(const Graph& graph, std::vector<OpsetImport> opsets, ExecOptions opts = {});
  ~Executor();

  // Inputs by name; graph inputs that are initializers may be omitted (their value is used).
  // `control` (run_control.h) lets the host cancel the run: Error(Cancelled) at the next node.
  std::vector<Tensor> run(const NamedTensors& inputs, RunStats* stats = nullptr, const RunControl* control = nullptr);
  // Inputs in the order of required_inputs().
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats = nullptr,
                          const RunControl* control = nullptr);

  // Graph inputs that have no initializer, in graph order.
  const std::vector<std::string>& required_inputs() const { return required_; }
  std::vector<std::string> output_names() const;
  const ExecPlan& plan() const { return *plan_; }
  MemoryReport memory_report() const;
  ThreadPool& threads() { return *threads_; }

  struct RunContext;  // one run's arenas, values and buffer pool (executor.cpp)

 private:
  std::unique_ptr<RunContext> take_context(RunStats& stats);
  void give_back(std::unique_ptr<RunContext> ctx);
  std::vector<Tensor> run_bound(std::vector<const Tensor*>& bound, RunStats* stats, const RunControl* control);

  ExecOptions opts_;
  std::unique_ptr<ThreadPool> threads_;
  std::unique_ptr<ExecPlan> plan_;
  std::vector<std::string> required_;
  std::mutex mu_;
  std::vector<std::unique_ptr<RunContext>> idle_;
};

// Writes one run's timings as a trace in ONNX Runtime's profile layout, which chrome://tracing and
// Perfetto open: a JSON array with a "Session" event "model_run" and one "Node" event per node
// ("NAME_kernel_time", args op_name, node_name, run, depth). The Python package's end_profiling
// writes the same layout for several runs (docs/python.md).
std::string chrome_trace_json(const std::vector<NodeTiming>& timings);

}  // namespace fusor
