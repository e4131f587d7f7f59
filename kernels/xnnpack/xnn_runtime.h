// XNNPACK (Debian's libxnnpack, a 2022 snapshot) behind fusor's kernel contract: the "xnnpack"
// implementations of NHWC convolution, pooling and fully-connected ops, selected per node by the
// partitioner for the `xnnpack` provider (engine/session/partition.h).
//
// XNNPACK is optional: without it (FUSOR_HAVE_XNNPACK undefined) nothing is registered and
// xnnpack_status() says why, so the provider is reported unavailable (as it is when XNNPACK is
// compiled in but fails to initialize; its kernels then refuse to be created).
//
// XNNPACK operators keep the pointers of their last setup, so one operator cannot run two calls
// at once: each kernel serializes setup + run with a mutex (the kernel contract allows concurrent
// runs of a session; they wait for each other on these nodes).
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "kernels/kernel.h"

struct xnn_operator;
struct pthreadpool;

namespace fusor::xnnpack {

// "" when XNNPACK is compiled in and initialized; else why not (for the provider's message).
// XNNPACK is initialized on the first call (it reads the CPU's description: not free), not when
// the kernels are registered, so a session that uses no xnnpack kernel never pays for it.
const std::string& xnnpack_status();
// Throws BadInput naming the node when XNNPACK is unavailable (xnnpack_status()): every xnnpack
// kernel's factory calls it first.
void require_xnnpack(const KernelInfo& info);

// A pthreadpool with `threads` threads, shared by every kernel of the process and created on first
// use; nullptr (XNNPACK runs on the caller) for 1 thread or when FUSOR_XNNPACK_THREADPOOL=0.
pthreadpool* thread_pool_for(int threads);

struct OperatorDeleter {
  void operator()(xnn_operator* op) const;
};
using OperatorPtr = std::unique_ptr<xnn_operator, OperatorDeleter>;

// Throws BadInput naming the node when an XNNPACK call fails.
void check_status(int status, const std::string& where, const char* call);

// The default (cpu) kernel for the node: what an xnnpack kernel falls back to for forms XNNPACK
// does not run (fused residuals, ceil_mode, non-float data, weights only known at run time).
std::unique_ptr<Kernel> cpu_kernel(const KernelInfo& info);

}  // namespace fusor::xnnpack
