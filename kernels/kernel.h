// The contract between the executor and a CPU kernel.
//
// A Kernel is created once per node per session, from a KernelInfo (the node, its attributes,
// statically known input types, and constant inputs, so a kernel can pre-pack weights: through
// KernelInfo::prepacked, whose contract is in kernels/prepack.h, so that a session restored from
// a session image maps the packed bytes instead of packing again). At run
// time the executor calls compute() with a KernelContext that hands out inputs and allocates
// outputs from the session's arena. compute() must not keep pointers to inputs or outputs after
// it returns, must not allocate large buffers itself (ask the context for scratch), and must be
// safe to call concurrently from several runs of the same session (state in the Kernel is
// read-only after construction). A kernel whose compute() first streams large constant bytes (a
// GEMM's packed weights) names them in weights(): the executor hands them to the node before as
// a prefetch hint (kernels/gemm/gemm.h); they must stay valid and unchanged for the kernel's life.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/error.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "kernels/prepack.h"

namespace fusor {

class ThreadPool;

struct KernelInfo {
  const Node* node = nullptr;
  const Graph* graph = nullptr;
  int64_t opset = 0;                        // version of the node's domain imported by the model
  std::vector<const ValueType*> input_types;   // nullptr for absent inputs
  std::vector<const ValueType*> output_types;  // as inferred; may lack shapes
  std::vector<TensorPtr> const_inputs;      // the constant value of an input, or null
  Prepacker prepack;                        // set by the planner; default: always fill

  // A named, read-only, 64-byte aligned buffer of `bytes` bytes derived from this node's constant
  // inputs: filled by `fill` now, or mapped from the session image this session was restored
  // from. Call it from the kernel's constructor; the rules are in kernels/prepack.h.
  PrepackedBuffer prepacked(std::string_view name, size_t bytes, const PrepackFill& fill) const {
    return prepack.get(name, bytes, fill);
  }

  const Node& n() const { return *node; }
  // "node 'conv1' (Conv)": use it to start error messages.
  std::string where() const { return node ? node->describe() : std::string("kernel"); }
};

class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual int num_inputs() const = 0;
  // nullptr for an absent optional input.
  virtual const Tensor* input(int i) const = 0;
  virtual int num_outputs() const = 0;
  // Whether the graph wants output i (optional outputs may be absent).
  virtual bool output_wanted(int i) const = 0;
  // Allocates output i (from the arena when planned). Contents are uninitialized.
  virtual Tensor& output(int i, const Shape& shape, DataType dtype) = 0;
  // Makes output i a view of input `in` with a new shape (Reshape, Squeeze, Identity...), no copy.
  virtual Tensor& output_alias(int i, int in, const Shape& shape) = 0;
  // Sets output i to a value the kernel made outside the arena: a sequence or none (Tensor's
  // non-tensor values), or a tensor that owns its storage (an item taken out of a sequence).
  // Contexts that cannot hold such values (constant folding) refuse with Error(Internal).
  virtual void set_value(int i, Tensor v) {
    (void)i;
    (void)v;
    throw_internal(where() + ": this context cannot hold sequence or optional values");
  }
  // Temporary memory valid until compute() returns, 64-byte aligned.
  virtual void* scratch(size_t bytes) = 0;
  virtual ThreadPool& threads() = 0;
  // Runs a subgraph of this node (If/Loop/Scan/SequenceMap). `inputs` are its formal inputs in order;
  // captured outer values are resolved by the executor. Returns its outputs (owned).
  virtual std::vector<Tensor> run_subgraph(const Graph& body, const std::vector<Tensor>& inputs) = 0;
  // "node 'conv1' (Conv)"
  virtual std::string where() const = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void compute(KernelContext& ctx) = 0;
  // (input, output) pairs where the output may be written over the input's buffer when the input
  // dies at this node and has the same byte size.
  virtual std::vector<std::pair<int, int>> inplace_pairs() const { return {}; }
  // The input that output `out` is a view of (output_alias), or -1.
  virtual int alias_of(int out) const { return -1; }
  // The constant bytes compute() streams first, if any (a GEMM's packed weights): the executor
  // passes them to the node before as a prefetch hint (kernels/gemm/gemm.h: WeightsHint).
  struct Bytes {
    const void* data = nullptr;
    size_t size = 0;
  };
  virtual Bytes weights() const { return {}; }
};

using KernelFactory = std::function<std::unique_ptr<Kernel>(const KernelInfo&)>;

// Kernels by (domain, op). Several implementations may exist for an op: "reference" (plain and
// obviously right; the tests hold every other implementation against it) and faster ones.
// find() picks the highest-priority implementation unless FUSOR_KERNELS=reference is set or a
// specific implementation is asked for.
class KernelRegistry {
 public:
  struct Entry {
    OpType op;
    std::string impl;       // "reference", "fast", ...
    int priority = 0;       // higher wins
    int since_version = 1;  // first opset this kernel handles
    KernelFactory factory;
  };

  // The registry with every built-in kernel registered.
  static KernelRegistry& global();

  void add(std::string_view domain, std::string_view op, std::string impl, int priority, KernelFactory f,
           int since_version = 1);
  // Best implementation for the op at this opset; nullptr when none. `impl` empty: the default
  // choice; otherwise that implementation only.
  const Entry* find(OpType op, int64_t opset, std::string_view impl = {}) const;
  bool has(OpType op) const;
  // All registered ops, sorted by qualified name.
  std::vector<OpType> ops() const;
  // Creates the kernel for a node; throws BadInput naming the node when no kernel exists.
  std::unique_ptr<Kernel> create(const KernelInfo& info, std::string_view impl = {}) const;

 private:
  std::vector<Entry> entries_;
};

}  // namespace fusor
