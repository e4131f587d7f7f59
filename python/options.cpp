// SessionOptions, GraphOptimizationLevel and ExecutionMode in ONNX Runtime's names. fusor-only
// settings are plain attributes too (rule_files, disabled_rules, no_default_rules, rules_dir,
// use_cache, cache_path) and config entries under "fusor." (docs/python.md lists them).
#include "python/options.h"


#include "python/bindings.h"

namespace fusor::py {

namespace {

OptimizationLevel to_fusor(OrtLevel l) {
  switch (l) {
    case OrtLevel::DisableAll: return OptimizationLevel::Disabled;
    case OrtLevel::EnableBasic: return OptimizationLevel::Basic;
    case OrtLevel::EnableExtended: return OptimizationLevel::Extended;
    case OrtLevel::EnableLayout: return OptimizationLevel::Layout;
    case OrtLevel::EnableAll: return OptimizationLevel::All;
  }
  return OptimizationLevel::All;
}

OrtLevel to_ort(OptimizationLevel l) {
  switch (l) {
    case OptimizationLevel::Disabled: return OrtLevel::DisableAll;
    case OptimizationLevel::Basic: return OrtLevel::EnableBasic;
    case OptimizationLevel::Extended: return OrtLevel::EnableExtended;
    case OptimizationLevel::Layout: return OrtLevel::EnableLayout;
    case OptimizationLevel::All: return OrtLevel::EnableAll;
  }
  return OrtLevel::EnableAll;
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    size_t b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : text) {
    if (c == ';' || c == ',') flush();
    else cur += c;
  }
  flush();
  return out;
}

bool parse_flag(const std::string& key, const std::string& v) {
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  raise(ErrorCode::InvalidArgument, "session config entry '" + key + "': expected 0 or 1, got '" + v + "'");
}

}  // namespace

SessionOptions PySessionOptions::resolved(const std::vector<std::string>& providers) const {
  SessionOptions o = base;
  o.providers = providers;
  for (const auto& [key, value] : config) {
    if (key == kDisableKeyOrt || key == kDisableKeySession) {
      for (std::string& n : split_names(value)) o.disabled_rules.push_back(std::move(n));
    } else if (key == "fusor.rule_files") {
      for (std::string& f : split_names(value)) o.rule_files.push_back(std::move(f));
    } else if (key == "fusor.rules_dir") {
      o.rules_dir = value;
    } else if (key == "fusor.no_default_rules") {
      o.no_default_rules = parse_flag(key, value);
    } else if (key == "fusor.use_cache") {
      o.use_cache = parse_flag(key, value);
    } else if (key == "fusor.cache_path") {
      o.cache_path = value;
    } else if (key.rfind("fusor.", 0) == 0) {
      raise(ErrorCode::InvalidArgument,
            "unknown session config entry '" + key +
                "' (fusor's: fusor.rule_files, fusor.rules_dir, fusor.no_default_rules, fusor.use_cache, fusor.cache_path)");
    }
    // Other keys are ONNX Runtime's; like ORT with a key it does not use, they are kept and ignored.
  }
  return o;
}

void bind_options(pyb::module_& m) {
  pyb::enum_<OrtLevel>(m, "GraphOptimizationLevel", "ONNX Runtime's levels; fusor's are disabled..all")
      .value("ORT_DISABLE_ALL", OrtLevel::DisableAll)
      .value("ORT_ENABLE_BASIC", OrtLevel::EnableBasic)
      .value("ORT_ENABLE_EXTENDED", OrtLevel::EnableExtended)
      .value("ORT_ENABLE_LAYOUT", OrtLevel::EnableLayout)
      .value("ORT_ENABLE_ALL", OrtLevel::EnableAll);
  pyb::enum_<OrtExecutionMode>(m, "ExecutionMode", "accepted for ONNX Runtime scripts; fusor runs nodes in order")
      .value("ORT_SEQUENTIAL", OrtExecutionMode::Sequential)
      .value("ORT_PARALLEL", OrtExecutionMode::Parallel);

  using O = PySessionOptions;
  pyb::class_<O>(m, "SessionOptions", "How an InferenceSession loads, optimizes and runs a model")
      .def(pyb::init<>())
      .def_property(
          "graph_optimization_level", [](const O& o) { return to_ort(o.base.level); },
          [](O& o, OrtLevel l) { o.base.level = to_fusor(l); })
      .def_property(
          "optimized_model_filepath", [](const O& o) { return o.base.optimized_model_path; },
          [](O& o, const pyb::object& p) { o.base.optimized_model_path = pyb::str(pyb::module_::import("os").attr("fspath")(p)); })
      .def_property(
          "intra_op_num_threads", [](const O& o) { return o.base.threads; },
          [](O& o, int n) {
            if (n < 0) raise(ErrorCode::InvalidArgument,
                             "intra_op_num_threads must be 0 (all cores) or more, got " + std::to_string(n));
            o.base.threads = n;
          })
      .def_property(
          "enable_profiling", [](const O& o) { return o.base.profile; }, [](O& o, bool b) { o.base.profile = b; })
      .def_readwrite("profile_file_prefix", &O::profile_file_prefix)
      .def_readwrite("inter_op_num_threads", &O::inter_op_num_threads)
      .def_readwrite("log_severity_level", &O::log_severity_level)
      .def_readwrite("log_verbosity_level", &O::log_verbosity_level)
      .def_readwrite("logid", &O::logid)
      .def_readwrite("enable_cpu_mem_arena", &O::enable_cpu_mem_arena)
      .def_readwrite("enable_mem_pattern", &O::enable_mem_pattern)
      .def_readwrite("enable_mem_reuse", &O::enable_mem_reuse)
      .def_readwrite("use_deterministic_compute", &O::use_deterministic_compute)
      .def_readwrite("execution_mode", &O::execution_mode)
      // fusor's own settings (the CLI's --rules, --disable, --no-default-rules, --cache).
      .def_property(
          "rule_files", [](const O& o) { return o.base.rule_files; },
          [](O& o, std::vector<std::string> v) { o.base.rule_files = std::move(v); })
      .def_property(
          "disabled_rules", [](const O& o) { return o.base.disabled_rules; },
          [](O& o, std::vector<std::string> v) { o.base.disabled_rules = std::move(v); })
      .def_property(
          "no_default_rules", [](const O& o) { return o.base.no_default_rules; },
          [](O& o, bool b) { o.base.no_default_rules = b; })
      .def_property(
          "rules_dir", [](const O& o) { return o.base.rules_dir; }, [](O& o, std::string d) { o.base.rules_dir = std::move(d); })
      .def_property(
          "use_cache", [](const O& o) { return o.base.use_cache; }, [](O& o, bool b) { o.base.use_cache = b; })
      .def_property(
          "cache_path", [](const O& o) { return o.base.cache_path; }, [](O& o, std::string p) { o.base.cache_path = std::move(p); })
      .def(
          "add_session_config_entry", [](O& o, const std::string& key, const std::string& value) { o.config[key] = value; },
          pyb::arg("key"), pyb::arg("value"))
      .def(
          "get_session_config_entry",
          [](const O& o, const std::string& key) {
            auto it = o.config.find(key);
            if (it == o.config.end())
              raise(ErrorCode::InvalidArgument, "SessionOptions has no config entry '" + key + "'");
            return it->second;
          },
          pyb::arg("key"))
      .def(
          "add_free_dimension_override_by_name",
          [](O& o, const std::string& name, int64_t value) {
            if (value < 0)
              raise(ErrorCode::InvalidArgument, "free dimension '" + name + "': negative value");
            for (auto& d : o.base.dim_overrides)
              if (d.first == name) { d.second = value; return; }
            o.base.dim_overrides.emplace_back(name, value);
          },
          pyb::arg("dim_name"), pyb::arg("dim_value"))
      .def(
          "add_shape_override",
          [](O& o, const std::string& input, std::vector<int64_t> shape) {
            o.base.shape_overrides.emplace_back(input, std::move(shape));
          },
          pyb::arg("input_name"), pyb::arg("shape"), "fusor: give an input a static shape (the CLI's --shape)")
      .def("__copy__", [](const O& o) { return O(o); })
      .def("__repr__", [](const O& o) {
        return std::string("SessionOptions(level=") + level_name(o.base.level) +
               ", threads=" + std::to_string(o.base.threads) + ", profiling=" + (o.base.profile ? "on" : "off") +
               (o.base.optimized_model_path.empty() ? "" : ", optimized_model_filepath='" + o.base.optimized_model_path + "'") + ")";
      });

  using R = PyRunOptions;
  pyb::class_<R>(m, "RunOptions", "Per-run options (ONNX Runtime's RunOptions); set terminate from another thread to cancel")
      .def(pyb::init<>())
      .def_property(
          "terminate", [](const R& r) { return r.base->terminate.load(); },
          [](R& r, bool v) { r.base->terminate.store(v); },
          "True stops the runs using these options at the next node (they raise fusor.Cancelled)")
      .def_property(
          "timeout_ms", [](const R& r) { return r.base->timeout_ms; },
          [](R& r, double v) {
            if (!(v >= 0)) raise(ErrorCode::InvalidArgument, "timeout_ms: expected a number >= 0");
            r.base->timeout_ms = v;
          },
          "fusor: cancel a run still going after this many milliseconds (0: no limit)")
      .def_readwrite("log_severity_level", &R::log_severity_level)
      .def_readwrite("log_verbosity_level", &R::log_verbosity_level)
      .def_readwrite("logid", &R::logid)
      .def_readwrite("only_execute_path_to_fetches", &R::only_execute_path_to_fetches)
      .def(
          "add_run_config_entry", [](R& r, const std::string& k, const std::string& v) { r.config[k] = v; },
          pyb::arg("config_key"), pyb::arg("config_value"))
      .def(
          "get_run_config_entry",
          [](const R& r, const std::string& k) {
            auto it = r.config.find(k);
            if (it == r.config.end()) raise(ErrorCode::InvalidArgument, "no run config entry '" + k + "'");
            return it->second;
          },
          pyb::arg("config_key"))
      .def("__repr__", [](const R& r) {
        return std::string("RunOptions(terminate=") + (r.base->terminate.load() ? "True" : "False") + ")";
      });
}

}  // namespace fusor::py
