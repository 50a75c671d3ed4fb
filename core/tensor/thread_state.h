// The per-thread state of the call running on a thread, in one thread-local so that the allocation
// path looks it up once: the interrupt and budget installed by call_limits.h's scopes and the
// allocator's cache of small buffers. Internal to core/tensor (call_limits.cc, allocator.cc).
#ifndef KILN_CORE_TENSOR_THREAD_STATE_H_
#define KILN_CORE_TENSOR_THREAD_STATE_H_

#include <functional>

#include "absl/status/status.h"

// Initial-exec TLS: a fixed offset from the thread pointer, no __tls_get_addr call when core is
// linked into a shared library (the Python module). The state is a few words, well within the
// static TLS that glibc reserves for libraries loaded with dlopen.
#if defined(__GNUC__)
#define KILN_INITIAL_EXEC_TLS __attribute__((tls_model("initial-exec")))
#else
#define KILN_INITIAL_EXEC_TLS
#endif

namespace kiln {

class MemoryBudget;
struct SmallBuffers;

// Trivially destructible and constant-initialised: valid (and guard-free) until the thread's
// storage goes, even while its other thread-locals are being destroyed.
struct ThreadState {
  const std::function<absl::Status()>* interrupt = nullptr;  // CurrentInterrupt()
  MemoryBudget* budget = nullptr;         // CurrentBudgetPtr(), owned by CurrentBudget()
  SmallBuffers* small_buffers = nullptr;  // allocator.cc's cache, made on the first free
  bool small_buffers_closed = false;      // freed at thread exit: nothing more is kept
};

// This thread's state (defined in call_limits.cc).
extern constinit thread_local ThreadState thread_state KILN_INITIAL_EXEC_TLS;

}  // namespace kiln

#endif  // KILN_CORE_TENSOR_THREAD_STATE_H_
