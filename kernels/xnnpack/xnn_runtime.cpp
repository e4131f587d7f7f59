#include "kernels/xnnpack/xnn_runtime.h"

#include <cstdlib>
#include <map>

#include "core/util/error.h"
#include "kernels/register.h"

#ifdef FUSOR_HAVE_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif

namespace fusor::xnnpack {

const std::string& xnnpack_status() {
#ifdef FUSOR_HAVE_XNNPACK
  static const std::string status = [] {
    xnn_status s = xnn_initialize(nullptr);
    return s == xnn_status_success ? std::string()
                                   : "xnn_initialize failed (status " + std::to_string(static_cast<int>(s)) +
                                         "; the CPU may lack the instructions XNNPACK needs)";
  }();
#else
  static const std::string status =
      "fusor was built without XNNPACK (install libxnnpack-dev and libpthreadpool-dev, then re-run cmake)";
#endif
  return status;
}

void require_xnnpack(const KernelInfo& info) {
  if (const std::string& why = xnnpack_status(); !why.empty())
    throw_bad_input(info.where() + ": the xnnpack kernel is unavailable: " + why);
}

pthreadpool* thread_pool_for(int threads) {
#ifdef FUSOR_HAVE_XNNPACK
  // FUSOR_XNNPACK_THREADPOOL=0 keeps XNNPACK on the caller: pthreadpool's workers spin while they
  // wait, which on a machine with more runnable threads than cores (2 cores at load 17) made two
  // threads 3x slower than one; on the same machine at load 3 the pool halves resnet18's time.
  static const bool use_pool = [] {
    const char* e = std::getenv("FUSOR_XNNPACK_THREADPOOL");
    return !(e && std::string(e) == "0");
  }();
  if (threads <= 1 || !use_pool) return nullptr;
  static std::mutex mu;
  static std::map<int, pthreadpool*> pools;  // lives as long as the process
  std::lock_guard<std::mutex> lock(mu);
  pthreadpool*& p = pools[threads];
  if (!p) p = pthreadpool_create(static_cast<size_t>(threads));
  return p;
#else
  (void)threads;
  return nullptr;
#endif
}

void OperatorDeleter::operator()(xnn_operator* op) const {
#ifdef FUSOR_HAVE_XNNPACK
  if (op) xnn_delete_operator(op);
#else
  (void)op;
#endif
}

void check_status(int status, const std::string& where, const char* call) {
  if (status != 0) throw_bad_input(where + ": XNNPACK " + call + " failed (status " + std::to_string(status) + ")");
}

std::unique_ptr<Kernel> cpu_kernel(const KernelInfo& info) { return KernelRegistry::global().create(info); }

}  // namespace fusor::xnnpack
