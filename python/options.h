// SessionOptions as Python sees it: fusor::SessionOptions plus what ONNX Runtime's SessionOptions
// carries that fusor has no use for (inter-op threads, log levels, ...: stored, shown, ignored)
// and the session config entries (add_session_config_entry).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fusor/options.h"

namespace fusor::py {

// ONNX Runtime's numbering (GraphOptimizationLevel in onnxruntime_c_api.h).
enum class OrtLevel { DisableAll = 0, EnableBasic = 1, EnableExtended = 2, EnableLayout = 3, EnableAll = 99 };
enum class OrtExecutionMode { Sequential = 0, Parallel = 1 };

// Config keys whose value is a list of rule or built-in pass names to skip (ORT's key, and the
// spelling the fusor issue used); ';' or ',' separated.
inline constexpr const char* kDisableKeyOrt = "optimization.disable_specified_optimizers";
inline constexpr const char* kDisableKeySession = "session.disable_specified_optimizers";

struct PySessionOptions {
  SessionOptions base;
  std::map<std::string, std::string> config;
  std::string profile_file_prefix = "fusor_profile";
  // Accepted for ORT scripts, without effect in fusor.
  int inter_op_num_threads = 0;
  int log_severity_level = 2;
  int log_verbosity_level = 0;
  std::string logid;
  bool enable_cpu_mem_arena = true, enable_mem_pattern = true, enable_mem_reuse = true;
  bool use_deterministic_compute = false;
  OrtExecutionMode execution_mode = OrtExecutionMode::Sequential;

  // base with the config entries applied (the disable lists, fusor.* keys). Throws
  // Exception(InvalidArgument) for a bad fusor.* value.
  SessionOptions resolved(const std::vector<std::string>& providers) const;
};

// RunOptions as Python sees it (ORT's RunOptions): `terminate` set from any thread cancels the
// runs given this object (fusor.Cancelled, a subclass of Fail, at the next node); `timeout_ms` is
// fusor's extra. The flag lives in a shared fusor::RunOptions so a run keeps it alive.
struct PyRunOptions {
  std::shared_ptr<RunOptions> base = std::make_shared<RunOptions>();
  std::map<std::string, std::string> config;
  // Accepted for ORT scripts, without effect in fusor.
  int log_severity_level = 2;
  int log_verbosity_level = 0;
  std::string logid;
  bool only_execute_path_to_fetches = false;
};

}  // namespace fusor::py
