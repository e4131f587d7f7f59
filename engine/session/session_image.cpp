#include "engine/session/session_image.h"

#include <unistd.h>

#include <cstdlib>
#include <unordered_map>

#include "cache/key.h"
#include "cache/payload.h"
#include "core/util/json.h"
#include "core/util/log.h"
#include "engine/session/optimized_stamp.h"

namespace fusor {

std::string image_identity() {
  return std::string("fusor ") + engine_version() + " " + cache::build_identity() + " cpu=" + cache::cpu_features();
}

std::string image_variant(const ExecOptions& exec, const std::vector<std::string>& providers) {
  std::string v = "impl=" + exec.kernel_impl + ";providers=";
  for (const std::string& p : providers) v += p + ",";
  for (const char* env : {"FUSOR_KERNELS", "FUSOR_ISA", "FUSOR_GEMM_TILE", "FUSOR_GEMM_BLOCK"}) {
    const char* x = std::getenv(env);
    v += std::string(";") + env + "=" + (x ? x : "");
  }
  return v;
}

namespace {

StoredMemoryPlan from_image(const cache::ImageMemoryPlan& m) {
  StoredMemoryPlan s;
  s.ordinal = m.ordinal;
  s.layout.offset = m.offset;
  s.layout.capacity.assign(m.capacity.begin(), m.capacity.end());
  s.layout.buffer.assign(m.buffer.begin(), m.buffer.end());
  s.layout.inplace.assign(m.inplace.begin(), m.inplace.end());
  s.layout.is_view.assign(m.is_view.begin(), m.is_view.end());
  s.layout.arena_bytes = m.arena_bytes;
  s.layout.naive_bytes = m.naive_bytes;
  s.layout.num_buffers = m.num_buffers;
  s.layout.num_inplace = m.num_inplace;
  s.planned_bytes.assign(m.planned_bytes.begin(), m.planned_bytes.end());
  return s;
}

cache::ImageMemoryPlan to_image(const StoredMemoryPlan& s) {
  cache::ImageMemoryPlan m;
  m.ordinal = s.ordinal;
  m.offset = s.layout.offset;
  m.capacity.assign(s.layout.capacity.begin(), s.layout.capacity.end());
  m.buffer.assign(s.layout.buffer.begin(), s.layout.buffer.end());
  m.inplace.assign(s.layout.inplace.begin(), s.layout.inplace.end());
  m.is_view.assign(s.layout.is_view.begin(), s.layout.is_view.end());
  m.arena_bytes = s.layout.arena_bytes;
  m.naive_bytes = s.layout.naive_bytes;
  m.num_buffers = s.layout.num_buffers;
  m.num_inplace = s.layout.num_inplace;
  m.planned_bytes.assign(s.planned_bytes.begin(), s.planned_bytes.end());
  return m;
}

}  // namespace

bool restore_exec_options(const SessionImageState& st, const Model& model, const std::string& variant,
                          ExecOptions& exec, std::map<std::string, int64_t>& provider_nodes) {
  if (!st.image || !st.plan || st.plan->variant != variant) return false;
  const cache::ImagePlan& plan = *st.plan;
  std::vector<NodeId> order = model.graph->order();
  if (plan.node_impl.size() != order.size()) return false;
  std::map<std::string, int64_t> counts;
  try {
    json::Value v = json::parse(plan.provider_nodes);
    if (!v.is_object()) return false;
    for (const auto& [k, x] : v.as_object()) counts[k] = x.as_int();
  } catch (const std::exception&) {
    return false;
  }
  auto impl = std::make_shared<std::unordered_map<const Node*, std::string>>();
  for (size_t i = 0; i < order.size(); ++i)
    if (!plan.node_impl[i].empty()) (*impl)[&model.graph->node(order[i])] = plan.node_impl[i];
  exec.kernel_impl_for = [impl](const Node& n) {
    auto it = impl->find(&n);
    return it == impl->end() ? std::string() : it->second;
  };
  auto source = std::make_shared<StoredPrepackSource>();
  std::shared_ptr<const void> keep(st.image, st.image->data());
  for (const cache::ImagePrepacked& p : plan.prepacked)
    source->add(p.kernel_id, p.name, PrepackedBuffer(keep, p.data, p.bytes));
  exec.prepack = std::move(source);
  auto mem = std::make_shared<std::vector<StoredMemoryPlan>>();
  for (const cache::ImageMemoryPlan& m : plan.memory) mem->push_back(from_image(m));
  exec.stored_memory = std::move(mem);
  provider_nodes = std::move(counts);
  return true;
}

bool store_session_image(SessionImageState& st, const Model& model, const Executor* executor,
                         const std::string& variant, const ExecOptions* exec,
                         const std::map<std::string, int64_t>* provider_nodes) {
  if (!st.store) return false;
  std::optional<cache::ImagePlan> plan;
  std::vector<PrepackRecord> records;  // keeps the buffers alive until the image is written
  if (executor && exec) {
    plan.emplace();
    plan->variant = variant;
    for (NodeId id : model.graph->order())
      plan->node_impl.push_back(exec->kernel_impl_for ? exec->kernel_impl_for(model.graph->node(id)) : std::string());
    plan->provider_nodes = provider_nodes ? json::Value(*provider_nodes).dump() : std::string("{}");
    if (st.recorder) records = st.recorder->records();
    for (const PrepackRecord& r : records)
      plan->prepacked.push_back({r.kernel_id, r.name, r.buffer.data(), static_cast<uint64_t>(r.buffer.size())});
    std::vector<const ExecPlan*> plans;
    executor->plan().collect(plans);
    for (const ExecPlan* p : plans) plan->memory.push_back(to_image(p->initial_memory()));
  }
  std::string tmp;
  try {
    cache::ImageDataBuilder data;
    std::string meta = cache::encode_image_meta(model, plan ? &*plan : nullptr, data);
    const std::string dir = st.store->images_dir();
    cache::WrittenImage img = cache::write_image_tmp(dir, image_identity(), meta, data);
    tmp = img.tmp_path;
    if (static_cast<int64_t>(img.bytes) >= st.max_bytes) {
      FUSOR_LOG(Info) << "cache: the session image (" << img.bytes << " bytes) exceeds the bound; not stored";
      ::unlink(tmp.c_str());
      return false;
    }
    const std::string payload = cache::encode_image_ref({img.name, img.bytes});
    bool ok = st.store->put(st.key, st.meta, st.info, payload, st.max_bytes, static_cast<int64_t>(img.bytes),
                            [&] { cache::publish_image(img, dir); });
    ::unlink(tmp.c_str());  // still there when the store refused the entry before publishing
    if (ok) st.needs_store = false;
    return ok;
  } catch (const std::exception& e) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    FUSOR_LOG(Warn) << "cache " << st.store->path() << ": the session image was not stored: " << e.what();
    return false;
  }
}

}  // namespace fusor
