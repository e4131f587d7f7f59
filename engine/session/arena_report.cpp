#include "engine/session/arena_report.h"

namespace fusor {

namespace {

const char* placement(const MemoryLayout& l, size_t s) {
  if (l.is_view[s]) return "view";
  if (l.inplace[s]) return "inplace";
  return "buffer";
}

}  // namespace

json::Value arena_json(const Executor& executor) {
  const ExecPlan& plan = executor.plan();
  auto mem = plan.memory();
  const MemoryLayout& l = mem->layout;
  json::Value tensors = json::Value::array();
  for (size_t s = 0; s < plan.slots().size() && s < l.offset.size(); ++s) {
    if (l.offset[s] < 0) continue;
    const Slot& slot = plan.slots()[s];
    json::Value t = json::Value::object();
    t.set("name", slot.value ? slot.value->name : "");
    t.set("def", slot.def);
    t.set("last", slot.last);
    t.set("bytes", static_cast<int64_t>(l.capacity[s]));
    t.set("offset", l.offset[s]);
    t.set("buffer", l.buffer[s]);
    t.set("placement", placement(l, s));
    tensors.push_back(std::move(t));
  }
  MemoryReport all = executor.memory_report();
  json::Value v = json::Value::object();
  v.set("steps", static_cast<int64_t>(plan.steps().size()));
  v.set("peak_bytes", static_cast<int64_t>(mem->tensor_bytes));
  v.set("no_reuse_bytes", static_cast<int64_t>(l.naive_bytes));
  v.set("reuse_ratio", l.naive_bytes ? static_cast<double>(mem->tensor_bytes) / static_cast<double>(l.naive_bytes) : 0.0);
  v.set("scratch_bytes", static_cast<int64_t>(mem->scratch_bytes));
  v.set("buffers", l.num_buffers);
  v.set("inplace", l.num_inplace);
  v.set("tensors", std::move(tensors));
  std::vector<const ExecPlan*> plans;
  plan.collect(plans);
  json::Value sub = json::Value::object();
  sub.set("plans", static_cast<int64_t>(plans.size() - 1));
  sub.set("arena_bytes", static_cast<int64_t>(all.arena_bytes - mem->tensor_bytes));
  sub.set("no_reuse_bytes", static_cast<int64_t>(all.naive_bytes - l.naive_bytes));
  v.set("subgraphs", std::move(sub));
  return v;
}

}  // namespace fusor
