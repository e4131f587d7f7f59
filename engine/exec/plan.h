// The execution plan of one graph, built once per session (and once per subgraph, nested).
//
// - Steps: the graph's nodes in topological order, each with its Kernel created through
//   KernelRegistry::global().create(KernelInfo). A node without a kernel fails here, at plan
//   time, with BadInput naming the node and op. Constant nodes with a tensor-valued attribute are
//   folded into constant slots at plan time (no step), so their consumers see them as constant
//   inputs and can pre-pack.
// - Slots: one per ValueId of the graph (slot index == ValueId). A slot is a graph input, a
//   constant, a capture of a parent-graph value (subgraphs), or an intermediate defined by a step.
// - Lifetimes: first definition and last use (implicit uses by subgraph-holding nodes included),
//   in step indices. Graph outputs, inputs, constants and captures are kept out of the arena.
// - Memory: a MemoryState (plan_memory over the intermediates) that the executor may replace at
//   run time when the actual sizes (dynamic shapes) do not fit: record_run() merges a run's
//   observed sizes (max over runs) and re-plans, so a later run whose tensors fit allocates
//   nothing. MemoryState objects are immutable; runs hold a shared_ptr to the one they started
//   with, so re-planning never disturbs a run in flight.
#pragma once
#include <cstdint>
#include <memory>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/exec/memory_planner.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "kernels/kernel.h"

namespace fusor {

// One plan's initial memory plan, as a session image stores it: restoring it skips plan_memory.
struct StoredMemoryPlan {
  uint32_t ordinal = 0;
  MemoryLayout layout;
  std::vector<size_t> planned_bytes;  // per slot: the sizes the layout was made for
};

struct ExecOptions {
  int threads = 0;           // intra-op threads, counting the caller; 0 = all cores
  std::string kernel_impl;   // "" = the registry's default choice; e.g. "reference"
  // Per node: the implementation of the provider the node is assigned to (engine/session/partition.h);
  // "" (or no function) means kernel_impl.
  std::function<std::string(const Node&)> kernel_impl_for;
  bool profile = false;      // record per-node times (Executor::last_profile)
  // Where kernels get their prepacked constants (kernels/prepack.h): null fills them fresh; a
  // session image's source maps them. Each kernel's id is (plan ordinal << 32 | step index),
  // the plan ordinal counting plans in creation order (main graph 0, then subgraphs depth first).
  std::shared_ptr<PrepackSource> prepack;
  // Memory plans stored with a session image, by ordinal: a plan whose slot count matches takes
  // its stored layout instead of planning (the image was made from the same graph and kernels).
  std::shared_ptr<const std::vector<StoredMemoryPlan>> stored_memory;
};

enum class SlotKind : uint8_t { Unused, GraphInput, Constant, Capture, Intermediate };

struct Slot {
  SlotKind kind = SlotKind::Unused;
  const Value* value = nullptr;
  TensorPtr constant;           // Constant; for an initializer that is also a graph input: its default
  ValueId captured_from = kNoValue;  // Capture: the parent graph's value (== the parent plan's slot)
  bool graph_output = false;
  int def = -1;                 // defining step (Intermediate)
  int last = -1;                // last step that reads it
  int alias_of = -1;            // slot this is declared to be a view of (producer's Kernel::alias_of)
  std::vector<int> inplace_candidates;  // input slots whose buffer it may take over
  size_t static_bytes = 0;      // from the inferred static shape, 0 when unknown
};

class ExecPlan;

struct Step {
  const Node* node = nullptr;
  std::string where;                       // "node 'conv1' (Conv)"
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs;                 // slot per node input, -1 when absent
  std::vector<int> outputs;                // slot per node output, -1 when absent
  std::vector<char> wanted;                // per output: present and used (or a graph output)
  std::vector<int> release;                // slots whose last use is this step
  std::vector<std::pair<const Graph*, std::unique_ptr<ExecPlan>>> subplans;
  // The weights of the first of the next three steps that has any (Kernel::weights): the prefetch
  // hint the executor sets for this step (kernels/gemm/gemm.h).
  Kernel::Bytes next_weights;

  const ExecPlan* subplan(const Graph* g) const;
};

// One immutable memory plan: tensor arena + a scratch region after it.
struct MemoryState {
  MemoryLayout layout;
  size_t tensor_bytes = 0;   // layout.arena_bytes rounded up to 64
  size_t scratch_bytes = 0;  // the largest scratch any step asked for
  size_t total_bytes() const { return tensor_bytes + scratch_bytes; }
  uint64_t version = 0;
};

// Per-slot observations of one run, handed to ExecPlan::record_run.
struct RunObservation {
  std::vector<size_t> bytes;       // per slot: the largest byte size it had
  std::vector<char> needs_region;  // per slot: declared a view but the kernel allocated it
  std::vector<char> no_inplace;    // per slot: in-place was unsafe at run time
  size_t scratch_bytes = 0;
};

class ExecPlan {
 public:
  // `parent` is the plan of the graph that holds this subgraph (nullptr for the main graph).
  ExecPlan(const Graph& graph, const std::vector<OpsetImport>& opsets, const ExecOptions& opts,
           const ExecPlan* parent = nullptr);
  ExecPlan(const ExecPlan&) = delete;
  ExecPlan& operator=(const ExecPlan&) = delete;

  const Graph& graph() const { return graph_; }
  const ExecPlan* parent() const { return parent_; }
  uint32_t ordinal() const { return ordinal_; }
  const std::vector<Slot>& slots() const { return slots_; }
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<int>& input_slots() const { return input_slots_; }    // graph inputs, in order
  const std::vector<int>& output_slots() const { return output_slots_; }  // graph outputs, in order
  const std::vector<int>& capture_slots() const { return capture_slots_; }

  std::shared_ptr<const MemoryState> memory() const;
  // Merges a run's observations; re-plans if any size, flag or scratch grew. Thread-safe.
  void record_run(const RunObservation& obs) const;
  // Every plan below this one (subgraphs, recursively), this one first.
  void collect(std::vector<const ExecPlan*>& out) const;
  // The memory plan made at construction (or restored) with the sizes it was made for, before
  // any run changed it; for a session image.
  StoredMemoryPlan initial_memory() const;
  // Whether construction took a stored memory plan.
  bool memory_restored() const { return restored_; }

 private:
  void build_steps(const std::vector<OpsetImport>& opsets, const ExecOptions& opts);
  void compute_lifetimes();
  void link_next_weights();
  std::shared_ptr<const MemoryState> replan_locked() const;
  bool restorable(const StoredMemoryPlan& sm) const;

  const Graph& graph_;
  const ExecPlan* parent_;
  uint32_t ordinal_ = 0;
  mutable uint32_t next_ordinal_ = 1;  // root plan only: the next subgraph plan's ordinal
  bool restored_ = false;
  StoredMemoryPlan initial_;
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<int> input_slots_, output_slots_, capture_slots_;

  // The memory side changes at run time (record_run), under mu_.
  mutable std::mutex mu_;
  mutable std::vector<size_t> planned_bytes_;
  mutable std::vector<char> needs_region_, no_inplace_;
  mutable size_t scratch_bytes_ = 0;
  mutable uint64_t version_ = 0;
  mutable std::shared_ptr<const MemoryState> mem_;
};

// The static byte size of a value type when its shape is fully known, else 0.
size_t static_bytes_of(const ValueType& t);
// Throws BadInput naming `what` when the value's static shape (if known) needs more bytes than a
// 64-bit count holds or than this process can use (core/util/memory_limit.h).
void check_static_size(const Value& v, const std::string& what);

}  // namespace fusor
