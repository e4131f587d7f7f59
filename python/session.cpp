// _Session: a fusor::Session for Python (fusor.InferenceSession wraps it with ONNX Runtime's
// signature and provider names), NodeArg (get_inputs/get_outputs) and ModelMetadata
// (get_modelmeta).
//
// The GIL is released while the model loads and optimizes and during run(): the session never
// touches Python objects there (inputs are borrowed arrays kept alive by the caller's frame).
// With profiling on, every run's per-node times are kept (timestamps since the session was made)
// until the Python layer writes them at end_profiling().

#include <chrono>
#include <memory>
#include <mutex>

#include "fusor/session.h"
#include "python/arrays.h"
#include "python/bindings.h"
#include "python/options.h"

namespace fusor::py {

namespace {

using Clock = std::chrono::steady_clock;

struct NodeArg {
  std::string name, type;
  pyb::object shape;  // list of int | str (symbolic) | None (unknown); [] for an unknown rank
};

NodeArg node_arg(const TensorInfo& info) {
  NodeArg a{info.name, info.type, pyb::list()};
  pyb::list shape;
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (info.shape[i] >= 0) shape.append(info.shape[i]);
    else if (i < info.dim_names.size() && !info.dim_names[i].empty()) shape.append(info.dim_names[i]);
    else shape.append(pyb::none());
  }
  a.shape = shape;
  return a;
}

struct ProfileEvent {
  std::string name, op;  // a run: name "model_run", op ""
  int depth;             // -1 for a run
  double ts_us, dur_us;  // since the session was made
  int64_t run;
};

class PySession {
 public:
  PySession(const pyb::object& model, const PySessionOptions& options, const std::vector<std::string>& providers)
      : options_(options) {
    SessionOptions resolved = options.resolved(providers);
    if (pyb::isinstance<pyb::bytes>(model) || pyb::isinstance<pyb::bytearray>(model)) {
      std::string bytes = pyb::module_::import("builtins").attr("bytes")(model).cast<std::string>();
      pyb::gil_scoped_release nogil;
      session_ = std::make_unique<Session>(Session::from_bytes(std::move(bytes), resolved));
    } else {
      std::string path = pyb::str(pyb::module_::import("os").attr("fspath")(model));
      pyb::gil_scoped_release nogil;
      session_ = std::make_unique<Session>(path, resolved);
    }
    origin_ = Clock::now();
  }

  pyb::list run(const pyb::object& output_names, const pyb::dict& feed, const PyRunOptions* run_options) {
    std::vector<NamedTensor> inputs;
    std::vector<std::string> hints;  // inputs whose numpy dtype is not the model's (arrays.h)
    std::vector<pyb::array> keep(feed.size());
    size_t i = 0;
    for (auto item : feed) {
      std::string name = pyb::str(item.first);
      const TensorInfo* expected = nullptr;
      for (const TensorInfo& in : session_->inputs())
        if (in.name == name) expected = &in;
      std::string hint;
      inputs.emplace_back(name, input_tensor(name, item.second, keep[i++], expected, &hint));
      if (!hint.empty()) hints.push_back(hint);
    }
    std::vector<std::string> names;
    if (!output_names.is_none()) names = output_names.cast<std::vector<std::string>>();
    std::vector<HostTensor> outs;
    std::shared_ptr<RunOptions> control = run_options ? run_options->base : nullptr;  // alive for the run
    {
      pyb::gil_scoped_release nogil;
      Clock::time_point start = Clock::now();
      try {
        outs = control ? session_->run(inputs, names, *control) : session_->run(inputs, names);
      } catch (const Exception& e) {
        // The session's message is the CLI's; say what the Python value was.
        if (e.code() != ErrorCode::InvalidArgument || hints.empty()) throw;
        std::string what = e.what();
        for (const std::string& h : hints) what += "; " + h;
        throw Exception(e.code(), what);
      }
      if (session_->options().profile) record_profile(start);
    }
    pyb::list result;
    for (HostTensor& t : outs) result.append(output_array(std::move(t)));
    return result;
  }

  std::vector<NodeArg> inputs() const { return node_args(session_->inputs()); }
  std::vector<NodeArg> outputs() const { return node_args(session_->outputs()); }
  const PySessionOptions& options() const { return options_; }
  const Session& session() const { return *session_; }

  std::vector<ProfileEvent> take_profile() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(events_);
  }

 private:
  static std::vector<NodeArg> node_args(const std::vector<TensorInfo>& infos) {
    std::vector<NodeArg> out;
    for (const TensorInfo& t : infos) out.push_back(node_arg(t));
    return out;
  }

  // Concurrent runs with profiling on may pair a run with another run's node times (the
  // library keeps the last run's profile per session); single-threaded callers see exact data.
  void record_profile(Clock::time_point start) {
    double run_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    double base = std::chrono::duration<double, std::micro>(start - origin_).count();
    std::vector<NodeTime> nodes = session_->last_profile();
    std::lock_guard<std::mutex> lock(mu_);
    int64_t run = runs_++;
    events_.push_back({"model_run", "", -1, base, run_us, run});
    for (const NodeTime& n : nodes) events_.push_back({n.name, n.op, n.depth, base + n.start_us, n.dur_us, run});
  }

  PySessionOptions options_;
  std::unique_ptr<Session> session_;
  Clock::time_point origin_;
  std::mutex mu_;
  std::vector<ProfileEvent> events_;
  int64_t runs_ = 0;
};

pyb::dict arena_dict(const ArenaStats& a) {
  pyb::dict d;
  d["arena_bytes"] = a.arena_bytes;
  d["scratch_bytes"] = a.scratch_bytes;
  d["naive_bytes"] = a.naive_bytes;
  d["buffers"] = a.buffers;
  d["intermediates"] = a.intermediates;
  d["inplace"] = a.inplace;
  d["last_run_allocs"] = a.last_run_allocs;
  d["last_run_fallbacks"] = a.last_run_fallbacks;
  return d;
}

// The session-init times, in both the report and timing().
void add_init_times(pyb::dict& d, const TimingStats& t) {
  d["load_ms"] = t.load_ms;
  d["optimize_ms"] = t.optimize_ms;
  d["save_ms"] = t.save_ms;
  d["plan_ms"] = t.plan_ms;
  d["init_ms"] = t.init_ms;
}

pyb::dict report_dict(const OptimizationReport& r, const TimingStats& t) {
  pyb::dict d;
  d["level"] = r.level;
  d["providers"] = r.providers;
  d["rules_fired"] = r.rules_fired;
  d["nodes_before"] = r.nodes_before;
  d["nodes_after"] = r.nodes_after;
  d["cache"] = r.cache;
  d["rule_set_hash"] = r.rule_set_hash;
  d["optimized_model_path"] = r.optimized_model_path;
  add_init_times(d, t);
  return d;
}

pyb::dict timing_dict(const TimingStats& t) {
  pyb::dict d;
  add_init_times(d, t);
  d["runs"] = t.runs;
  d["last_run_ms"] = t.last_run_ms;
  d["total_run_ms"] = t.total_run_ms;
  return d;
}

}  // namespace

void bind_session(pyb::module_& m) {
  pyb::class_<NodeArg>(m, "NodeArg", "A model input or output: name, shape (symbolic dims as str), type")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("type", &NodeArg::type)
      .def_readonly("shape", &NodeArg::shape)
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type + "', shape=" + std::string(pyb::repr(a.shape)) + ")";
      });

  pyb::class_<ModelMetadata>(m, "ModelMetadata", "The model's producer, graph name, domain, description, version and metadata_props")
      .def_readonly("producer_name", &ModelMetadata::producer_name)
      .def_readonly("producer_version", &ModelMetadata::producer_version)
      .def_readonly("graph_name", &ModelMetadata::graph_name)
      .def_readonly("domain", &ModelMetadata::domain)
      .def_readonly("description", &ModelMetadata::description)
      .def_property_readonly("graph_description", [](const ModelMetadata&) { return std::string(); })
      .def_readonly("version", &ModelMetadata::version)
      .def_readonly("custom_metadata_map", &ModelMetadata::custom);

  pyb::class_<PySession>(m, "_Session", "fusor::Session; use fusor.InferenceSession")
      .def(pyb::init<const pyb::object&, const PySessionOptions&, const std::vector<std::string>&>(), pyb::arg("model"),
           pyb::arg("options"), pyb::arg("providers"))
      .def("run", &PySession::run, pyb::arg("output_names"), pyb::arg("input_feed"), pyb::arg("run_options") = nullptr)
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("options", &PySession::options, pyb::return_value_policy::copy)
      .def("providers", [](const PySession& s) { return s.session().options().providers; })
      .def("metadata", [](const PySession& s) { return s.session().metadata(); })
      .def("arena_stats", [](const PySession& s) { return arena_dict(s.session().arena_stats()); })
      .def("timing", [](const PySession& s) { return timing_dict(s.session().timing()); })
      .def("optimization_report",
           [](const PySession& s) { return report_dict(s.session().optimization_report(), s.session().timing()); })
      .def("take_profile", [](PySession& s) {
        pyb::list out;
        for (const ProfileEvent& e : s.take_profile())
          out.append(pyb::make_tuple(e.name, e.op, e.depth, e.ts_us, e.dur_us, e.run));
        return out;
      });
}

}  // namespace fusor::py
