// fusor::Session (include/fusor/session.h) over prepare_session and the Executor.
#include <filesystem>
#include <mutex>

#include <cstdio>

#include "engine/session/api_error.h"
#include "engine/session/api_options.h"
#include "engine/session/api_tensor.h"
#include "engine/session/prepare.h"
#include "core/util/stopwatch.h"
#include "fusor/session.h"

namespace fusor {

struct Session::Impl {
  SessionOptions options;
  PreparedSession prepared;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<const Value*> feedable;  // every graph input, initializer-backed ones included
  std::vector<std::string> required;   // inputs without an initializer

  mutable std::mutex mu;  // guards the statistics below (runs may be concurrent)
  TimingStats timing;
  RunStats last_run;

  Impl(const ModelSource& source, const SessionOptions& opts) : options(opts) {
    PrepareOptions p = prepare_options(opts);
    prepared = api_call([&] { return prepare_session(source, p); });
    const Graph& g = *prepared.model->graph;
    for (ValueId v : g.inputs()) {
      feedable.push_back(&g.value(v));
      if (!g.value(v).is_initializer()) inputs.push_back(tensor_info(g.value(v)));
    }
    for (ValueId v : g.outputs()) outputs.push_back(tensor_info(g.value(v)));
    required = prepared.executor->required_inputs();
    timing.load_ms = prepared.load_ms;
    timing.optimize_ms = prepared.optimize_ms;
    timing.save_ms = prepared.save_ms;
    timing.plan_ms = prepared.plan_ms;
    timing.init_ms = prepared.init_ms();
  }

  const Value* find_input(const std::string& name) const {
    for (const Value* v : feedable)
      if (v->name == name) return v;
    return nullptr;
  }

  std::string input_names() const {
    std::string s;
    for (const TensorInfo& i : inputs) s += (s.empty() ? "" : ", ") + i.name;
    return s;
  }

  void check_input(const Value& v, const HostTensor& t) const {
    auto fail = [&](const std::string& why) { throw_api(ErrorCode::InvalidArgument, "input '" + v.name + "': " + why); };
    if (t.empty() || element_size(t.element_type()) == 0) fail("empty tensor");
    if (!v.type.is_tensor()) fail("is not a tensor input (" + onnx_type_name_of(v) + ")");
    // The texts of the executor's own input check, so the API and `fusor run` say the same.
    DataType want = v.type.elem;
    Shape shape(t.shape().begin(), t.shape().end());
    if (want != DataType::Undefined && want != to_dtype(t.element_type()))
      fail("expected " + tensor_type_name(want) + " (" + v.type.str() + "), got " +
           tensor_type_name(to_dtype(t.element_type())) + " of shape " + shape_str(shape));
    if (!v.type.has_shape) return;
    const auto& dims = v.type.dims;
    if (dims.size() != t.shape().size())
      fail("expected rank " + std::to_string(dims.size()) + " (" + v.type.str() + "), got shape " + shape_str(shape) +
           " (rank " + std::to_string(t.shape().size()) + ")");
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i].is_known() && dims[i].value != t.shape()[i])
        fail("dimension " + std::to_string(i) + " is " + std::to_string(t.shape()[i]) + " but the model declares " +
             v.type.str());
  }

  static std::string onnx_type_name_of(const Value& v) { return tensor_info(v).type; }

  NamedTensors bind(const std::vector<NamedTensor>& given) const {
    NamedTensors bound;
    for (const auto& [name, t] : given) {
      const Value* v = find_input(name);
      if (!v) throw_api(ErrorCode::InvalidArgument, "the model has no input '" + name + "' (its inputs: " + input_names() + ")");
      for (const auto& b : bound)
        if (b.first == name) throw_api(ErrorCode::InvalidArgument, "input '" + name + "' is given twice");
      check_input(*v, t);
      bound.emplace_back(name, engine_view(t));
    }
    for (const std::string& r : required) {
      bool have = false;
      for (const auto& b : bound) have |= b.first == r;
      if (!have) throw_api(ErrorCode::InvalidArgument, "missing input '" + r + "' (the model's inputs: " + input_names() + ")");
    }
    return bound;
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Session::Session(const std::string& path, const SessionOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw_api(ErrorCode::NoSuchFile, path + ": cannot open: No such file or directory");  // as the CLI
  impl_ = std::make_unique<Impl>(ModelSource::file(path), options);
}

Session Session::from_bytes(std::string bytes, const SessionOptions& options, const std::string& base_dir) {
  ModelSource src = ModelSource::memory(std::move(bytes));
  src.base_dir = base_dir;
  return Session(std::make_unique<Impl>(src, options));
}

Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs; }

std::vector<HostTensor> Session::run(const std::vector<NamedTensor>& inputs) { return run(inputs, {}); }

std::vector<HostTensor> Session::run(const std::vector<NamedTensor>& inputs, const std::vector<std::string>& output_names) {
  return run_controlled(inputs, output_names, nullptr);
}

std::vector<HostTensor> Session::run(const std::vector<NamedTensor>& inputs, const std::vector<std::string>& output_names,
                                     const RunOptions& run_options) {
  return run_controlled(inputs, output_names, &run_options);
}

std::vector<HostTensor> Session::run_controlled(const std::vector<NamedTensor>& inputs,
                                                const std::vector<std::string>& output_names,
                                                const RunOptions* run_options) {
  Impl& im = *impl_;
  std::vector<size_t> pick;
  for (const std::string& name : output_names) {
    size_t k = 0;
    while (k < im.outputs.size() && im.outputs[k].name != name) ++k;
    if (k == im.outputs.size()) throw_api(ErrorCode::InvalidArgument, "the model has no output '" + name + "'");
    pick.push_back(k);
  }
  NamedTensors bound = im.bind(inputs);
  RunStats stats;
  Stopwatch clock;
  RunControl control;
  if (run_options) {
    control.terminate = &run_options->terminate;
    if (run_options->timeout_ms > 0) {
      control.deadline = RunControl::Clock::now() + std::chrono::duration_cast<RunControl::Clock::duration>(
                                                        std::chrono::duration<double, std::milli>(run_options->timeout_ms));
      char buf[64];
      std::snprintf(buf, sizeof buf, "its timeout of %g ms expired", run_options->timeout_ms);
      control.deadline_reason = buf;
    }
  }
  std::vector<Tensor> outs =
      api_call([&] { return im.prepared.executor->run(bound, &stats, run_options ? &control : nullptr); });
  double ms = clock.ms();
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.timing.runs++;
    im.timing.last_run_ms = ms;
    im.timing.total_run_ms += ms;
    im.last_run = std::move(stats);
  }
  std::vector<HostTensor> result;
  if (output_names.empty()) {
    for (Tensor& t : outs) result.push_back(api_call([&] { return host_tensor(std::move(t)); }));
  } else {
    for (size_t k : pick) result.push_back(api_call([&] { return host_tensor(Tensor(outs[k])); }));
  }
  return result;
}

ArenaStats Session::arena_stats() const {
  MemoryReport m = impl_->prepared.executor->memory_report();
  ArenaStats a;
  a.arena_bytes = m.arena_bytes;
  a.scratch_bytes = m.scratch_bytes;
  a.naive_bytes = m.naive_bytes;
  a.buffers = m.buffers;
  a.intermediates = m.intermediates;
  a.inplace = m.inplace;
  std::lock_guard<std::mutex> lock(impl_->mu);
  a.last_run_allocs = impl_->last_run.allocs;
  a.last_run_fallbacks = impl_->last_run.fallbacks;
  return a;
}

TimingStats Session::timing() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->timing;
}

OptimizationReport Session::optimization_report() const {
  const PreparedSession& p = impl_->prepared;
  OptimizationReport r;
  r.level = level_name(impl_->options.level);
  r.providers = impl_->options.providers;
  r.rules_fired = p.report.rules_fired;
  r.nodes_before = p.nodes_before;
  r.nodes_after = p.nodes_after;
  r.cache = p.cache;
  r.rule_set_hash = p.report.rule_set_hash;
  r.optimized_model_path = impl_->options.optimized_model_path;
  return r;
}

std::vector<NodeTime> Session::last_profile() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<NodeTime> out;
  for (const NodeTiming& t : impl_->last_run.profile) out.push_back({t.name, t.op, t.depth, t.start_us, t.dur_us});
  return out;
}

std::string Session::last_profile_chrome_trace() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return chrome_trace_json(impl_->last_run.profile);
}

ModelMetadata Session::metadata() const {
  const Model& m = *impl_->prepared.model;
  ModelMetadata md;
  md.producer_name = m.producer_name;
  md.producer_version = m.producer_version;
  md.graph_name = m.graph->name;
  md.domain = m.domain;
  md.description = m.doc_string;
  md.version = m.model_version;
  for (const auto& [k, v] : m.metadata) md.custom[k] = v;
  return md;
}

const SessionOptions& Session::options() const { return impl_->options; }

}  // namespace fusor
