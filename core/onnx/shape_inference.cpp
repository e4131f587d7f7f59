#include "core/onnx/shape_inference.h"

#include "core/onnx/fusor_schemas.h"
#include "core/util/log.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusor {

namespace {

// ONNX's inference functions assume a node that its schema accepts (libonnx 1.12 dereferences a
// missing Scan body, for one). Nodes that fail their schema's Verify are renamed to an op
// without a schema for the duration of inference, which then skips them, and restored after.
struct MaskedNode {
  onnx::NodeProto* node;
  std::string op_type;
};

void mask_unverifiable_nodes(onnx::GraphProto& g, const std::unordered_map<std::string, int>& opsets,
                             std::vector<MaskedNode>& masked) {
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) mask_unverifiable_nodes(*a.mutable_g(), opsets, masked);
      for (auto& sg : *a.mutable_graphs()) mask_unverifiable_nodes(sg, opsets, masked);
    }
    std::string domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    auto it = opsets.find(domain);
    const onnx::OpSchema* schema =
        it == opsets.end() ? nullptr : onnx::OpSchemaRegistry::Schema(n.op_type(), it->second, domain);
    bool ok = true;
    if (schema) {
      try {
        schema->Verify(n);
      } catch (const std::exception&) {
        ok = false;
      }
    } else if (it == opsets.end() && onnx::OpSchemaRegistry::Schema(n.op_type(), domain)) {
      ok = false;  // a known op from a domain the model does not import
    }
    if (!ok) {
      masked.push_back({&n, n.op_type()});
      n.set_op_type("fusor.unverified." + n.op_type());
    }
  }
}


void infer_in_place(onnx::ModelProto& mp) {
  std::unordered_map<std::string, int> opsets;
  for (const auto& o : mp.opset_import())
    opsets[o.domain() == "ai.onnx" ? std::string() : o.domain()] = static_cast<int>(o.version());
  std::vector<MaskedNode> masked;
  mask_unverifiable_nodes(*mp.mutable_graph(), opsets, masked);
  // check_type off, error mode 0 (per-node errors are skipped), no data propagation.
  onnx::ShapeInferenceOptions options(false, 0, false);
  try {
    onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    // Whatever was inferred before the failure stays; the rest keeps its declared type.
  }
  for (auto& m : masked) m.node->set_op_type(m.op_type);
}

// What inference produced, without the rest of the model: per graph its value_info and outputs,
// and the subgraphs of each node (nodes kept in order so the parent can walk in parallel).
void collect_types(const onnx::GraphProto& g, onnx::GraphProto* out) {
  *out->mutable_value_info() = g.value_info();
  *out->mutable_output() = g.output();
  for (const auto& n : g.node()) {
    auto* on = out->add_node();
    for (const auto& a : n.attribute()) {
      if (!a.has_g() && a.graphs_size() == 0) continue;
      auto* oa = on->add_attribute();
      oa->set_name(a.name());
      if (a.has_g()) collect_types(a.g(), oa->mutable_g());
      for (const auto& sg : a.graphs()) collect_types(sg, oa->add_graphs());
    }
  }
}

void apply_types(onnx::GraphProto& g, const onnx::GraphProto& t) {
  *g.mutable_value_info() = t.value_info();
  if (t.output_size() == g.output_size())
    for (int i = 0; i < g.output_size(); ++i) *g.mutable_output(i)->mutable_type() = t.output(i).type();
  for (int i = 0; i < g.node_size() && i < t.node_size(); ++i) {
    auto& n = *g.mutable_node(i);
    for (const auto& ta : t.node(i).attribute())
      for (auto& a : *n.mutable_attribute()) {
        if (a.name() != ta.name()) continue;
        if (a.has_g() && ta.has_g()) apply_types(*a.mutable_g(), ta.g());
        for (int k = 0; k < a.graphs_size() && k < ta.graphs_size(); ++k) apply_types(*a.mutable_graphs(k), ta.graphs(k));
      }
  }
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t w = ::write(fd, s.data() + done, s.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

// Runs inference in a forked child (copy-on-write, so the model is not copied) and applies the
// types it sends back. libonnx's inference functions can crash on malformed nodes; a crash or
// hang then costs the types, not the process. False when no child could be started.
bool infer_in_child(onnx::ModelProto& mp) {
  onnx::OpSchemaRegistry::Instance();  // build the registry once, in the parent
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // A crash here is the expected failure this child exists for: die of the signal at once,
    // without the crash handlers the host installed (a crash reporter, a sanitizer, a fuzzer
    // writing the input out as a finding). The parent reports the crash as lost types.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
    // Test hook: FUSOR_TEST_INFER_CRASH=1 makes the child die as a crash in libonnx would.
    if (const char* t = std::getenv("FUSOR_TEST_INFER_CRASH"); t && *t == '1') ::raise(SIGSEGV);
    infer_in_place(mp);
    onnx::ModelProto types;
    collect_types(mp.graph(), types.mutable_graph());
    bool ok = write_all(fds[1], types.SerializeAsString());
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  std::string result;
  char buf[1 << 16];
  bool timed_out = false;
  const int kTimeoutMs = 120000;  // far beyond any real model; a hung child costs only types
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, kTimeoutMs);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // The child's end is logged: a crash inside libonnx is otherwise invisible (and a fuzzer
  // would see nothing of it).
  if (timed_out) {
    FUSOR_LOG(Warn) << "ONNX shape inference did not finish in " << kTimeoutMs / 1000
                    << " s (its child process was killed); types are inferred without it";
    return true;
  }
  if (WIFSIGNALED(status)) {
    FUSOR_LOG(Warn) << "ONNX shape inference crashed in its child process (signal " << WTERMSIG(status) << ", "
                    << strsignal(WTERMSIG(status)) << "); types are inferred without it";
    return true;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    FUSOR_LOG(Warn) << "ONNX shape inference's child process failed (exit " << WEXITSTATUS(status)
                    << "); types are inferred without it";
    return true;
  }
  onnx::ModelProto types;
  if (types.ParseFromString(result)) apply_types(*mp.mutable_graph(), types.graph());
  return true;
}

}  // namespace

void run_onnx_shape_inference(onnx::ModelProto& mp) {
  register_fusor_schemas();  // in this process, before a child is forked
  static const bool in_process = std::getenv("FUSOR_INFER_IN_PROCESS") != nullptr;
  if (in_process || !infer_in_child(mp)) infer_in_place(mp);
}

}  // namespace fusor

