#include "engine/exec/executor.h"

#include "core/util/memory_limit.h"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <list>
#include <sstream>

#include "core/util/memory_limit.h"
#include "engine/exec/buffer_pool.h"
#include "kernels/gemm/gemm.h"

namespace fusor {

namespace {

using Clock = std::chrono::steady_clock;

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

// One plan's memory and values during a run.
struct PlanState {
  explicit PlanState(const ExecPlan& p) : plan(&p) {
    const auto& slots = p.slots();
    values.resize(slots.size());
    pooled.assign(slots.size(), 0);
    obs.bytes.assign(slots.size(), 0);
    obs.needs_region.assign(slots.size(), 0);
    obs.no_inplace.assign(slots.size(), 0);
    for (size_t s = 0; s < slots.size(); ++s)
      if (slots[s].kind == SlotKind::Constant) values[s] = *slots[s].constant;
  }
  const ExecPlan* plan;
  std::shared_ptr<const MemoryState> mem;
  std::shared_ptr<Buffer> arena;
  std::vector<Tensor> values;
  std::vector<char> pooled;  // the slot holds a pool buffer made for it (a graph output)
  RunObservation obs;
  bool dirty = false;
  std::atomic<size_t> scratch_used{0};
  std::mutex scratch_mu;
  std::vector<std::shared_ptr<Buffer>> scratch_fallbacks;

  char* arena_base() const { return static_cast<char*>(arena->data()); }
  // Drops every non-constant value (end of a run).
  void clear() {
    const auto& slots = plan->slots();
    for (size_t s = 0; s < slots.size(); ++s)
      if (slots[s].kind != SlotKind::Constant && values[s].defined()) values[s] = Tensor();
    std::fill(pooled.begin(), pooled.end(), 0);
  }
};

}  // namespace

struct Executor::RunContext {
  std::vector<std::pair<const ExecPlan*, std::unique_ptr<PlanState>>> states;
  BufferPool pool;
  ThreadPool* threads = nullptr;
  RunStats* stats = nullptr;
  const RunControl* control = nullptr;  // the host's cancellation (run_control.h), or none
  bool profile = false;
  Clock::time_point t0;

  PlanState& state_for(const ExecPlan& p) {
    for (auto& [plan, st] : states)
      if (plan == &p) return *st;
    states.emplace_back(&p, std::make_unique<PlanState>(p));
    return *states.back().second;
  }
  void count_alloc() { ++stats->allocs; }

  Tensor copy_to_pool(const Tensor& t) {
    if (!t.is_plain()) return t;  // a sequence (immutable, its items own their storage) or none
    if (t.dtype() == DataType::String) {
      count_alloc();
      return t.clone();
    }
    Tensor out(t.dtype(), t.shape(), pool.acquire(t.nbytes(), &stats->allocs), 0);
    if (t.nbytes()) std::memcpy(out.raw(), t.raw(), t.nbytes());
    return out;
  }

  // Takes the plan's current MemoryState, growing the arena when it no longer fits.
  void prepare(PlanState& ps);
  void run_plan(PlanState& ps, int depth);
  std::vector<Tensor> collect_outputs(PlanState& ps);
};

namespace {

class NodeContext final : public KernelContext {
 public:
  NodeContext(Executor::RunContext* rc, PlanState& ps, const Step& st, int depth)
      : rc_(rc), ps_(ps), st_(st), depth_(depth) {}

  int num_inputs() const override { return static_cast<int>(st_.inputs.size()); }
  const Tensor* input(int i) const override {
    if (i < 0 || i >= num_inputs()) return nullptr;
    int s = st_.inputs[i];
    if (s < 0 || !ps_.values[s].defined()) return nullptr;
    return &ps_.values[s];
  }
  int num_outputs() const override { return static_cast<int>(st_.outputs.size()); }
  bool output_wanted(int i) const override {
    return i >= 0 && i < num_outputs() && st_.wanted[i];
  }
  Tensor& output(int i, const Shape& shape, DataType dtype) override;
  Tensor& output_alias(int i, int in, const Shape& shape) override;
  void set_value(int i, Tensor v) override;
  void* scratch(size_t bytes) override;
  ThreadPool& threads() override;
  std::vector<Tensor> run_subgraph(const Graph& body, const std::vector<Tensor>& inputs) override;
  std::string where() const override { return st_.where; }

  // After compute(): frees scratch fallbacks and records the scratch high-water mark.
  void finish() {
    size_t used = ps_.scratch_used.load();
    if (used > ps_.obs.scratch_bytes) ps_.obs.scratch_bytes = used;
    if (!ps_.scratch_fallbacks.empty()) ps_.scratch_fallbacks.clear();
    for (size_t o = 0; o < st_.outputs.size(); ++o)
      if (st_.wanted[o] && !ps_.values[st_.outputs[o]].defined())
        throw_internal(st_.where + ": the kernel did not produce output " + std::to_string(o));
  }

 private:
  Tensor& discard(Tensor t) {
    discarded_.push_back(std::move(t));
    return discarded_.back();
  }
  Tensor& fallback(int s, const Shape& shape, DataType dtype, size_t bytes) {
    rc_->count_alloc();
    ++rc_->stats->fallbacks;
    ps_.dirty = true;
    return ps_.values[s] = Tensor(dtype, shape, make_aligned_buffer(std::max<size_t>(bytes, 1), false), 0);
  }
  // Whether writing [off, off+bytes) of the arena is safe given this step's inputs.
  bool arena_range_free(int s, size_t off, size_t bytes) {
    const auto& layout = ps_.mem->layout;
    for (int in : st_.inputs) {
      if (in < 0) continue;
      const Tensor& t = ps_.values[in];
      if (!t.defined() || t.buffer() != ps_.arena || t.nbytes() == 0 || bytes == 0) continue;
      size_t b = t.offset(), e = b + t.nbytes();
      if (b >= off + bytes || e <= off) continue;
      if (layout.inplace[s] && b == off && t.nbytes() == bytes) continue;  // the planned in-place pair
      return false;
    }
    return true;
  }

  Executor::RunContext* rc_;
  PlanState& ps_;
  const Step& st_;
  int depth_;
  std::list<Tensor> discarded_;  // outputs nobody reads (a std::list: constructing it allocates nothing)
};

Tensor& NodeContext::output(int i, const Shape& shape, DataType dtype) {
  if (i < 0 || i >= num_outputs()) throw_internal(st_.where + ": output index " + std::to_string(i) + " out of range");
  int s = st_.outputs[i];
  for (int64_t d : shape)
    if (d < 0) throw_bad_input(st_.where + ": negative dimension in output shape " + shape_str(shape));
  if (s < 0) {
    rc_->count_alloc();
    return discard(Tensor(dtype, shape));
  }
  if (dtype == DataType::String) {
    rc_->count_alloc();
    return ps_.values[s] = Tensor(dtype, shape);
  }
  const size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  if (bytes > ps_.obs.bytes[s]) ps_.obs.bytes[s] = bytes;
  const Slot& slot = ps_.plan->slots()[s];
  if (slot.graph_output) {
    ps_.pooled[s] = 1;
    return ps_.values[s] = Tensor(dtype, shape, rc_->pool.acquire(bytes, &rc_->stats->allocs), 0);
  }
  const auto& layout = ps_.mem->layout;
  if (layout.is_view[s] || (slot.alias_of >= 0 && layout.offset[s] < 0)) {
    // Declared a view, but the kernel allocated: give it a region from the next plan on.
    ps_.obs.needs_region[s] = 1;
    return fallback(s, shape, dtype, bytes);
  }
  int64_t off = layout.offset[s];
  if (off >= 0 && bytes <= layout.capacity[s]) {
    if (arena_range_free(s, static_cast<size_t>(off), bytes))
      return ps_.values[s] = Tensor(dtype, shape, ps_.arena, static_cast<size_t>(off));
    if (layout.inplace[s]) ps_.obs.no_inplace[s] = 1;
  }
  return fallback(s, shape, dtype, bytes);
}

void NodeContext::set_value(int i, Tensor v) {
  if (i < 0 || i >= num_outputs()) throw_internal(st_.where + ": output index " + std::to_string(i) + " out of range");
  if (v.is_plain() && v.defined() && v.dtype() != DataType::String && v.buffer() && v.buffer() == ps_.arena)
    throw_internal(st_.where + ": set_value of a tensor in the arena");
  int s = st_.outputs[i];
  if (s < 0) {
    discard(std::move(v));
    return;
  }
  ps_.values[s] = std::move(v);
}

Tensor& NodeContext::output_alias(int i, int in, const Shape& shape) {
  const Tensor* src = input(in);
  if (!src) throw_internal(st_.where + ": output_alias of absent input " + std::to_string(in));
  if (!src->is_plain()) {  // Identity of a sequence or an empty optional: the same value
    set_value(i, *src);
    return st_.outputs[i] < 0 ? discarded_.back() : ps_.values[st_.outputs[i]];
  }
  if (shape_numel(shape) != src->numel())
    throw_bad_input(st_.where + ": cannot view " + shape_str(src->shape()) + " as " + shape_str(shape));
  if (i < 0 || i >= num_outputs()) throw_internal(st_.where + ": output index " + std::to_string(i) + " out of range");
  int s = st_.outputs[i];
  if (s < 0) return discard(src->reshaped(shape));
  const Slot& slot = ps_.plan->slots()[s];
  const auto& layout = ps_.mem->layout;
  // A view is safe when the source is outside the arena (held by its own buffer for the run) or
  // when the plan kept the source's arena region alive for the view.
  bool planned = slot.alias_of == st_.inputs[in] && layout.is_view[s];
  if (!slot.graph_output && (src->buffer() != ps_.arena || planned)) {
    size_t bytes = src->nbytes();
    if (bytes > ps_.obs.bytes[s]) ps_.obs.bytes[s] = bytes;
    return ps_.values[s] = src->reshaped(shape);
  }
  Tensor keep = *src;  // output() may reuse the source's slot memory only if planned in place
  Tensor& out = output(i, shape, keep.dtype());
  if (keep.dtype() == DataType::String)
    out.string_data() = keep.string_data();
  else if (keep.nbytes() && out.raw() != keep.raw())
    std::memmove(out.raw(), keep.raw(), keep.nbytes());
  return out;
}

void* NodeContext::scratch(size_t bytes) {
  size_t need = align64(std::max<size_t>(bytes, 1));
  size_t off = ps_.scratch_used.fetch_add(need);
  if (off + need <= ps_.mem->scratch_bytes) return ps_.arena_base() + ps_.mem->tensor_bytes + off;
  std::lock_guard lock(ps_.scratch_mu);
  rc_->count_alloc();
  ++rc_->stats->fallbacks;
  ps_.dirty = true;
  ps_.scratch_fallbacks.push_back(make_aligned_buffer(need, false));
  return ps_.scratch_fallbacks.back()->data();
}

ThreadPool& NodeContext::threads() { return *rc_->threads; }

std::vector<Tensor> NodeContext::run_subgraph(const Graph& body, const std::vector<Tensor>& inputs) {
  const ExecPlan* sub = st_.subplan(&body);
  if (!sub) throw_internal(st_.where + ": run_subgraph of a graph this node does not hold");
  if (rc_->control) rc_->control->check(st_.where);  // every Loop/Scan iteration, even of an empty body
  if (inputs.size() != sub->input_slots().size())
    throw_bad_input(st_.where + ": subgraph '" + body.name + "' takes " + std::to_string(sub->input_slots().size()) +
                    " inputs, got " + std::to_string(inputs.size()));
  PlanState& bs = rc_->state_for(*sub);
  for (int c : sub->capture_slots()) {
    ValueId from = sub->slots()[c].captured_from;
    const Tensor& v = ps_.values[from];
    if (!v.defined())
      throw_bad_input(st_.where + ": subgraph value '" + sub->slots()[c].value->name + "' refers to '" +
                      ps_.plan->graph().value(from).name + "', which has no value here");
    bs.values[c] = v;
  }
  for (size_t k = 0; k < inputs.size(); ++k) bs.values[sub->input_slots()[k]] = inputs[k];
  std::vector<Tensor> outs;
  try {
    rc_->run_plan(bs, depth_ + 1);
    outs = rc_->collect_outputs(bs);
  } catch (...) {
    bs.clear();
    throw;
  }
  bs.clear();
  return outs;
}

}  // namespace

void Executor::RunContext::prepare(PlanState& ps) {
  auto mem = ps.plan->memory();
  if (mem == ps.mem) return;
  if (!ps.arena || ps.arena->size() < mem->total_bytes()) {
    check_memory(mem->total_bytes(), "the memory plan of graph '" + ps.plan->graph().name + "' (its intermediates at their peak)");
    ps.arena = make_aligned_buffer(std::max<size_t>(mem->total_bytes(), 64), false);
    count_alloc();
  }
  ps.mem = std::move(mem);
}

namespace {

// Clears the thread's hint when a plan's run ends (or throws): it points into this session.
struct HintReset {
  ~HintReset() { set_weights_hint({}); }
};

}  // namespace

void Executor::RunContext::run_plan(PlanState& ps, int depth) {
  prepare(ps);
  const HintReset hint_reset;
  const auto& steps = ps.plan->steps();
  for (const Step& st : steps) {
    if (control) control->check(st.where);
    NodeContext ctx(this, ps, st, depth);
    ps.scratch_used = 0;
    Clock::time_point start;
    set_weights_hint({st.next_weights.data, st.next_weights.size});
    if (profile) start = Clock::now();
    try {
      st.kernel->compute(ctx);
      ctx.finish();
    } catch (const Error& e) {
      ps.scratch_fallbacks.clear();
      std::string m = e.what();
      if (m.find(st.where) != std::string::npos) throw;
      throw Error(e.kind(), st.where + ": " + m);
    } catch (const std::exception& e) {
      ps.scratch_fallbacks.clear();
      throw Error(ErrorKind::Internal, st.where + ": " + e.what());
    }
    if (profile) {
      auto end = Clock::now();
      NodeTiming t;
      t.name = !st.node->name.empty() ? st.node->name
               : (!st.outputs.empty() && st.outputs[0] >= 0) ? ps.plan->slots()[st.outputs[0]].value->name
                                                              : st.node->op.name();
      t.op = st.node->op.qualified();
      t.depth = depth;
      t.start_us = std::chrono::duration<double, std::micro>(start - t0).count();
      t.dur_us = std::chrono::duration<double, std::micro>(end - start).count();
      stats->profile.push_back(std::move(t));
    }
    for (int s : st.release) ps.values[s] = Tensor();
  }
  if (ps.dirty) {
    // Re-plan with what this run saw and grow the arena now, so the next run fits.
    ps.plan->record_run(ps.obs);
    ps.dirty = false;
    prepare(ps);
  }
}

std::vector<Tensor> Executor::RunContext::collect_outputs(PlanState& ps) {
  std::vector<Tensor> outs;
  outs.reserve(ps.plan->output_slots().size());
  for (int s : ps.plan->output_slots()) {
    const Tensor& v = ps.values[s];
    if (!v.defined())
      throw_internal("graph output '" + ps.plan->slots()[s].value->name + "' was not computed");
    outs.push_back(ps.pooled[s] ? v : copy_to_pool(v));
  }
  return outs;
}

Executor::Executor(const Model& model, ExecOptions opts) : Executor(*model.graph, model.opsets, std::move(opts)) {}

Executor::Executor(const Graph& graph, std::vector<OpsetImport> opsets, ExecOptions opts) : opts_(std::move(opts)) {
  threads_ = std::make_unique<ThreadPool>(opts_.threads);
  plan_ = std::make_unique<ExecPlan>(graph, opsets, opts_);
  for (int s : plan_->input_slots())
    if (!plan_->slots()[s].constant) required_.push_back(plan_->slots()[s].value->name);
}

Executor::~Executor() = default;

std::vector<std::string> Executor::output_names() const {
  std::vector<std::string> out;
  for (int s : plan_->output_slots()) out.push_back(plan_->slots()[s].value->name);
  return out;
}

std::unique_ptr<Executor::RunContext> Executor::take_context(RunStats& stats) {
  std::unique_ptr<RunContext> rc;
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      rc = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!rc) {
    rc = std::make_unique<RunContext>();
    rc->threads = threads_.get();
    ++stats.allocs;
  }
  return rc;
}

void Executor::give_back(std::unique_ptr<RunContext> rc) {
  rc->stats = nullptr;
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(rc));
}

namespace {

std::string declared(const ValueType& t) { return t.str(); }
void check_input_tensor(const Value& v, const ValueType& ty, const Tensor& t);

void check_input(const Value& v, const Tensor& given) {
  const ValueType* declared_type = &v.type;
  if (declared_type->is_optional()) {
    if (given.is_none()) return;
    if (!declared_type->element) return;
    declared_type = declared_type->element.get();
  } else if (given.is_none()) {
    throw_bad_input("input '" + v.name + "': got an empty optional, but the model declares " + declared(v.type));
  }
  if (declared_type->is_sequence()) {
    if (!given.is_sequence())
      throw_bad_input("input '" + v.name + "': expected a sequence (" + declared(v.type) + "), got a " + given.describe());
    const ValueType* el = declared_type->element.get();
    if (el && el->is_tensor())
      for (const Tensor& item : given.items()) check_input_tensor(v, *el, item);
    return;
  }
  if (given.is_sequence())
    throw_bad_input("input '" + v.name + "': got a " + given.describe() + ", but the model declares " + declared(v.type));
  check_input_tensor(v, *declared_type, given);
}

void check_input_tensor(const Value& v, const ValueType& ty, const Tensor& t) {
  if (!ty.is_tensor()) return;
  if (ty.elem != DataType::Undefined && t.dtype() != ty.elem)
    throw_bad_input("input '" + v.name + "': expected " + tensor_type_name(ty.elem) + " (" + declared(ty) + "), got " +
                    tensor_type_name(t.dtype()) + " of shape " + shape_str(t.shape()));
  if (!ty.has_shape) return;
  if (static_cast<int>(ty.dims.size()) != t.rank())
    throw_bad_input("input '" + v.name + "': expected rank " + std::to_string(ty.dims.size()) + " (" + declared(ty) +
                    "), got shape " + shape_str(t.shape()) + " (rank " + std::to_string(t.rank()) + ")");
  for (size_t d = 0; d < ty.dims.size(); ++d)
    if (ty.dims[d].is_known() && ty.dims[d].value != t.shape()[d])
      throw_bad_input("input '" + v.name + "': dimension " + std::to_string(d) + " is " + std::to_string(t.shape()[d]) +
                      " but the model declares " + declared(ty));
}

}  // namespace

std::vector<Tensor> Executor::run(const NamedTensors& inputs, RunStats* stats, const RunControl* control) {
  const auto& ins = plan_->input_slots();
  std::vector<const Tensor*> bound(ins.size(), nullptr);
  for (const auto& [name, t] : inputs) {
    size_t k = 0;
    while (k < ins.size() && plan_->slots()[ins[k]].value->name != name) ++k;
    if (k == ins.size()) {
      std::string known;
      for (const auto& r : required_) known += (known.empty() ? "" : ", ") + r;
      throw_bad_input("unknown input '" + name + "' (the model's inputs are: " + known + ")");
    }
    bound[k] = &t;
  }
  return run_bound(bound, stats, control);
}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs, RunStats* stats, const RunControl* control) {
  const auto& ins = plan_->input_slots();
  if (inputs.size() > required_.size())
    throw_bad_input("the model takes " + std::to_string(required_.size()) + " inputs, got " +
                    std::to_string(inputs.size()));
  std::vector<const Tensor*> bound(ins.size(), nullptr);
  size_t next = 0;
  for (size_t k = 0; k < ins.size() && next < inputs.size(); ++k)
    if (!plan_->slots()[ins[k]].constant) bound[k] = &inputs[next++];
  return run_bound(bound, stats, control);
}

std::vector<Tensor> Executor::run_bound(std::vector<const Tensor*>& bound, RunStats* stats,
                                        const RunControl* control) {
  RunStats local;
  RunStats& st = stats ? *stats : local;
  st.allocs = st.fallbacks = 0;
  st.profile.clear();
  const auto& ins = plan_->input_slots();
  for (size_t k = 0; k < ins.size(); ++k) {
    const Slot& slot = plan_->slots()[ins[k]];
    if (!bound[k]) {
      if (!slot.constant) throw_bad_input("missing input '" + slot.value->name + "'");
      continue;
    }
    check_input(*slot.value, *bound[k]);
  }
  auto rc = take_context(st);
  rc->stats = &st;
  rc->profile = opts_.profile;
  rc->control = control;
  rc->t0 = Clock::now();
  PlanState& ps = rc->state_for(*plan_);
  std::vector<Tensor> outs;
  try {
    for (size_t k = 0; k < ins.size(); ++k) ps.values[ins[k]] = bound[k] ? *bound[k] : *plan_->slots()[ins[k]].constant;
    rc->run_plan(ps, 0);
    outs = rc->collect_outputs(ps);
  } catch (...) {
    for (auto& [p, s] : rc->states) s->clear();
    give_back(std::move(rc));
    throw;
  }
  ps.clear();
  give_back(std::move(rc));
  return outs;
}

MemoryReport Executor::memory_report() const {
  MemoryReport r;
  std::vector<const ExecPlan*> plans;
  plan_->collect(plans);
  for (const ExecPlan* p : plans) {
    auto m = p->memory();
    r.arena_bytes += m->tensor_bytes;
    r.scratch_bytes += m->scratch_bytes;
    r.naive_bytes += m->layout.naive_bytes;
    r.buffers += m->layout.num_buffers;
    r.inplace += m->layout.num_inplace;
    for (size_t v = 0; v < m->layout.offset.size(); ++v)
      if (m->layout.offset[v] >= 0 && !m->layout.is_view[v]) ++r.intermediates;
  }
  return r;
}

std::string chrome_trace_json(const std::vector<NodeTiming>& timings) {
  auto esc = [](const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      o += c;
    }
    return o;
  };
  const long pid = static_cast<long>(::getpid());
  double end_us = 0;
  for (const NodeTiming& t : timings) end_us = std::max(end_us, t.start_us + t.dur_us);
  std::ostringstream os;
  // ONNX Runtime's profile layout (and the Python package's end_profiling): one "Session" event
  // for the run, one "Node" event per node.
  os << "[\n{\"cat\":\"Session\",\"pid\":" << pid << ",\"tid\":0,\"ph\":\"X\",\"name\":\"model_run\",\"ts\":0,\"dur\":"
     << end_us << ",\"args\":{\"run\":0}}";
  for (const NodeTiming& t : timings) {
    os << ",\n{\"cat\":\"Node\",\"pid\":" << pid << ",\"tid\":" << t.depth << ",\"ph\":\"X\",\"name\":\"" << esc(t.name)
       << "_kernel_time\",\"ts\":" << t.start_us << ",\"dur\":" << t.dur_us << ",\"args\":{\"op_name\":\"" << esc(t.op)
       << "\",\"node_name\":\"" << esc(t.name) << "\",\"run\":0,\"depth\":" << t.depth << "}}";
  }
  os << "\n]\n";
  return os.str();
}

}  // namespace fusor
