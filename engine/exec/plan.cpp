#include "engine/exec/plan.h"
#include "core/ops/op_names.h"
#include "core/ops/op_traits.h"

#include <algorithm>
#include <limits>

#include "core/util/memory_limit.h"

namespace fusor {

namespace {

int64_t opset_for(const std::vector<OpsetImport>& opsets, std::string_view domain) {
  domain = canonical_domain(domain);
  for (const auto& o : opsets)
    if (canonical_domain(o.domain) == domain) return o.version;
  return 0;
}

// The tensor a Constant node produces, when it is given by an attribute we can read.
TensorPtr constant_node_value(const Node& n) {
  if (n.op != op::Constant || n.attrs.size() != 1) return nullptr;
  const Attribute& a = n.attrs[0];
  if (a.name == "value" && a.kind == AttrKind::Tensor && a.t) return a.t;
  if (a.name == "value_float" && a.kind == AttrKind::Float) return std::make_shared<Tensor>(Tensor::scalar<float>(a.f));
  if (a.name == "value_int" && a.kind == AttrKind::Int) return std::make_shared<Tensor>(Tensor::scalar<int64_t>(a.i));
  if (a.name == "value_floats" && a.kind == AttrKind::Floats)
    return std::make_shared<Tensor>(Tensor::from_vector<float>({static_cast<int64_t>(a.floats.size())}, a.floats));
  if (a.name == "value_ints" && a.kind == AttrKind::Ints)
    return std::make_shared<Tensor>(Tensor::from_vector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints));
  if (a.name == "value_string" && a.kind == AttrKind::String)
    return std::make_shared<Tensor>(Tensor::strings({}, {a.s}));
  if (a.name == "value_strings" && a.kind == AttrKind::Strings)
    return std::make_shared<Tensor>(Tensor::strings({static_cast<int64_t>(a.strings.size())}, a.strings));
  return nullptr;
}

// Ops whose kernels take sequence or optional values: the sequence/optional ops and those that
// pass any value through (Identity, If, Loop).
bool takes_non_tensor(OpType op) {
  return op_traits(op).non_tensor_values || op == op::Identity || op == op::If || op == op::Loop;
}

}  // namespace

void check_static_size(const Value& v, const std::string& what) {
  if (!v.type.is_tensor() || !v.type.has_shape) return;
  auto shape = v.type.static_shape();
  if (!shape) return;
  std::optional<size_t> bytes = checked_nbytes(*shape, dtype_size(v.type.elem));
  if (!bytes) throw_bad_input(what + ": shape " + shape_str(*shape) + " has more bytes than a 64-bit count can hold");
  check_memory(*bytes, what);
}

size_t static_bytes_of(const ValueType& t) {
  if (!t.is_tensor() || !t.has_shape) return 0;
  auto s = t.static_shape();
  if (!s) return 0;
  return checked_nbytes(*s, dtype_size(t.elem)).value_or(std::numeric_limits<size_t>::max());  // saturates
}

const ExecPlan* Step::subplan(const Graph* g) const {
  for (const auto& [graph, plan] : subplans)
    if (graph == g) return plan.get();
  return nullptr;
}

ExecPlan::ExecPlan(const Graph& graph, const std::vector<OpsetImport>& opsets, const ExecOptions& opts,
                   const ExecPlan* parent)
    : graph_(graph), parent_(parent) {
  if (parent) {
    const ExecPlan* root = parent;
    while (root->parent_) root = root->parent_;
    ordinal_ = root->next_ordinal_++;
  }
  slots_.resize(graph.value_capacity());
  for (ValueId v = 0; v < graph.value_capacity(); ++v) {
    const Value& val = graph.value(v);
    if (!val.alive) continue;
    Slot& s = slots_[v];
    s.value = &val;
    if (val.captured_from != kNoValue) {
      s.kind = SlotKind::Capture;
      s.captured_from = val.captured_from;
      capture_slots_.push_back(static_cast<int>(v));
    } else if (val.is_graph_input) {
      s.kind = SlotKind::GraphInput;
      s.constant = val.constant;
    } else if (val.constant) {
      s.kind = SlotKind::Constant;
      s.constant = val.constant;
    }
  }
  for (ValueId v : graph.inputs()) {
    input_slots_.push_back(static_cast<int>(v));
    // An input declared too big (x: float[2147483648]) is named before any node is.
    if (!slots_[v].constant && !parent)
      check_static_size(graph.value(v), "input '" + graph.value(v).name + "' (" + graph.value(v).type.str() + ")");
  }
  for (ValueId v : graph.outputs()) {
    output_slots_.push_back(static_cast<int>(v));
    slots_[v].graph_output = true;
  }
  build_steps(opsets, opts);
  compute_lifetimes();
  link_next_weights();
  planned_bytes_.assign(slots_.size(), 0);
  needs_region_.assign(slots_.size(), 0);
  no_inplace_.assign(slots_.size(), 0);
  for (size_t i = 0; i < slots_.size(); ++i) planned_bytes_[i] = slots_[i].static_bytes;
  std::lock_guard lock(mu_);
  if (opts.stored_memory)
    for (const StoredMemoryPlan& sm : *opts.stored_memory)
      if (sm.ordinal == ordinal_ && restorable(sm)) {
        planned_bytes_ = sm.planned_bytes;
        auto m = std::make_shared<MemoryState>();
        m->layout = sm.layout;
        m->tensor_bytes = (m->layout.arena_bytes + 63) / 64 * 64;
        m->scratch_bytes = scratch_bytes_;
        m->version = ++version_;
        mem_ = std::move(m);
        restored_ = true;
        break;
      }
  if (!mem_) mem_ = replan_locked();
  initial_ = {ordinal_, mem_->layout, planned_bytes_};
}

bool ExecPlan::restorable(const StoredMemoryPlan& sm) const {
  const size_t n = slots_.size();
  const MemoryLayout& l = sm.layout;
  if (sm.planned_bytes.size() != n || l.offset.size() != n || l.capacity.size() != n || l.buffer.size() != n ||
      l.inplace.size() != n || l.is_view.size() != n)
    return false;
  for (size_t i = 0; i < n; ++i) {
    if (l.offset[i] < 0) continue;
    // Every placed value lies inside the arena, and is placed only if it is an intermediate.
    if (slots_[i].kind != SlotKind::Intermediate || static_cast<size_t>(l.offset[i]) > l.arena_bytes ||
        l.capacity[i] > l.arena_bytes - static_cast<size_t>(l.offset[i]))
      return false;
  }
  return true;
}

StoredMemoryPlan ExecPlan::initial_memory() const { return initial_; }

void ExecPlan::build_steps(const std::vector<OpsetImport>& opsets, const ExecOptions& opts) {
  for (NodeId id : graph_.order()) {
    const Node& n = graph_.node(id);
    if (TensorPtr c = constant_node_value(n); c && n.outputs.size() == 1 && n.outputs[0] != kNoValue) {
      Slot& s = slots_[n.outputs[0]];
      s.kind = SlotKind::Constant;
      s.constant = std::move(c);
      continue;
    }
    Step st;
    st.node = &n;
    st.where = n.describe();
    KernelInfo info;
    info.node = &n;
    info.graph = &graph_;
    info.opset = opset_for(opsets, n.op.domain());
    info.prepack = Prepacker{opts.prepack.get(), (uint64_t{ordinal_} << 32) | steps_.size()};
    for (ValueId v : n.inputs) {
      st.inputs.push_back(v == kNoValue ? -1 : static_cast<int>(v));
      info.input_types.push_back(v == kNoValue ? nullptr : &graph_.value(v).type);
      info.const_inputs.push_back(v != kNoValue && slots_[v].kind == SlotKind::Constant ? slots_[v].constant : nullptr);
    }
    for (ValueId v : n.outputs) {
      st.outputs.push_back(v == kNoValue ? -1 : static_cast<int>(v));
      info.output_types.push_back(v == kNoValue ? nullptr : &graph_.value(v).type);
      const Value* val = v == kNoValue ? nullptr : &graph_.value(v);
      st.wanted.push_back(val && (!val->uses.empty() || val->is_graph_output));
    }
    if (!takes_non_tensor(n.op))
      for (ValueId v : n.inputs)
        if (v != kNoValue && !graph_.value(v).type.is_tensor())
          throw_bad_input(st.where + ": input '" + graph_.value(v).name + "' is a " + graph_.value(v).type.str() +
                          ", but this op takes tensors only");
    std::string impl = opts.kernel_impl_for ? opts.kernel_impl_for(n) : std::string();
    st.kernel = KernelRegistry::global().create(info, impl.empty() ? std::string_view(opts.kernel_impl) : impl);
    for (Graph* sg : graph_.subgraphs(id))
      st.subplans.emplace_back(sg, std::make_unique<ExecPlan>(*sg, opsets, opts, this));
    int step_index = static_cast<int>(steps_.size());
    for (size_t o = 0; o < st.outputs.size(); ++o) {
      int os = st.outputs[o];
      if (os < 0) continue;
      Slot& s = slots_[os];
      s.kind = SlotKind::Intermediate;
      s.def = step_index;
      s.static_bytes = static_bytes_of(s.value->type);
      // Known from shapes: a value the machine cannot hold is refused now, naming its node, not
      // when the arena is allocated.
      check_static_size(*s.value, st.where + ": output '" + s.value->name + "' (" + s.value->type.str() + ")");
      int a = st.kernel->alias_of(static_cast<int>(o));
      if (a >= 0 && a < static_cast<int>(st.inputs.size()) && st.inputs[a] >= 0) s.alias_of = st.inputs[a];
    }
    for (auto [in, out] : st.kernel->inplace_pairs()) {
      if (in < 0 || out < 0 || in >= static_cast<int>(st.inputs.size()) || out >= static_cast<int>(st.outputs.size()))
        continue;
      int is = st.inputs[in], os = st.outputs[out];
      if (is < 0 || os < 0) continue;
      // An input read twice by this node through another operand is not safe to overwrite
      // unless every use is this same operand position.
      int uses_here = 0;
      for (int x : st.inputs) uses_here += x == is;
      if (uses_here != 1) continue;
      slots_[os].inplace_candidates.push_back(is);
    }
    steps_.push_back(std::move(st));
  }
}

void ExecPlan::compute_lifetimes() {
  const int nsteps = static_cast<int>(steps_.size());
  for (int i = 0; i < nsteps; ++i) {
    const Step& st = steps_[i];
    for (int s : st.inputs)
      if (s >= 0) slots_[s].last = std::max(slots_[s].last, i);
    for (ValueId v : st.node->implicit_inputs)
      if (v != kNoValue) slots_[v].last = std::max(slots_[v].last, i);
    for (int s : st.outputs)
      if (s >= 0) slots_[s].last = std::max(slots_[s].last, i);
  }
  for (size_t s = 0; s < slots_.size(); ++s) {
    Slot& sl = slots_[s];
    if (sl.kind == SlotKind::Unused) continue;
    if (sl.graph_output) sl.last = nsteps;  // kept until the run returns
    // Views keep their sources' tensors referenced until they die too; arena placement handles
    // the memory side. Only intermediates are released early.
    if (sl.kind == SlotKind::Intermediate && !sl.graph_output && sl.last >= 0 && sl.last < nsteps)
      steps_[sl.last].release.push_back(static_cast<int>(s));
  }
}

void ExecPlan::link_next_weights() {
  constexpr size_t kLookahead = 3;
  for (size_t i = 0; i < steps_.size(); ++i)
    for (size_t j = i + 1; j < steps_.size() && j <= i + kLookahead; ++j)
      if (const Kernel::Bytes w = steps_[j].kernel->weights(); w.data && w.size) {
        steps_[i].next_weights = w;
        break;
      }
}

std::shared_ptr<const MemoryState> ExecPlan::memory() const {
  std::lock_guard lock(mu_);
  return mem_;
}

std::shared_ptr<const MemoryState> ExecPlan::replan_locked() const {
  std::vector<PlannedValue> pv(slots_.size());
  for (size_t s = 0; s < slots_.size(); ++s) {
    const Slot& sl = slots_[s];
    PlannedValue& p = pv[s];
    p.in_arena = sl.kind == SlotKind::Intermediate && !sl.graph_output && sl.value->type.elem != DataType::String;
    p.def = std::max(sl.def, 0);
    p.last = std::max(sl.last, p.def);
    p.bytes = planned_bytes_[s];
    p.alias_of = needs_region_[s] ? -1 : sl.alias_of;
    if (!no_inplace_[s]) p.inplace_candidates = sl.inplace_candidates;
  }
  auto m = std::make_shared<MemoryState>();
  m->layout = plan_memory(pv);
  m->tensor_bytes = (m->layout.arena_bytes + 63) / 64 * 64;
  m->scratch_bytes = scratch_bytes_;
  m->version = ++version_;
  return m;
}

void ExecPlan::record_run(const RunObservation& obs) const {
  std::lock_guard lock(mu_);
  bool changed = false;
  for (size_t s = 0; s < slots_.size() && s < obs.bytes.size(); ++s) {
    if (obs.bytes[s] > planned_bytes_[s]) {
      planned_bytes_[s] = obs.bytes[s];
      changed = true;
    }
    if (s < obs.needs_region.size() && obs.needs_region[s] && !needs_region_[s]) needs_region_[s] = changed = true;
    if (s < obs.no_inplace.size() && obs.no_inplace[s] && !no_inplace_[s]) no_inplace_[s] = changed = true;
  }
  size_t scratch = (obs.scratch_bytes + 63) / 64 * 64;
  if (scratch > scratch_bytes_) {
    scratch_bytes_ = scratch;
    changed = true;
  }
  if (changed) mem_ = replan_locked();
}

void ExecPlan::collect(std::vector<const ExecPlan*>& out) const {
  out.push_back(this);
  for (const Step& st : steps_)
    for (const auto& [g, p] : st.subplans) p->collect(out);
}

}  // namespace fusor
