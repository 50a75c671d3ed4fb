// Refusing an op's work before any of it is allocated: the bytes it needs, checked against the
// call's memory budget (and the budgets above it) and the machine's memory, so that a hostile
// size gets a status naming the op and the shapes instead of a failed allocation.
#ifndef KILN_CORE_OPS_MEMORY_CHECK_H_
#define KILN_CORE_OPS_MEMORY_CHECK_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace kiln {

// OK when `bytes` more fit the call's memory budget (probed by a charge given back at once, so
// that the server's budget above the call's counts too) and the machine's physical memory; else
// RESOURCE_EXHAUSTED: "<what()> needs <bytes> bytes, but <the budget's words>" (what() is called
// only for an error, so a kernel may check every call). A negative `bytes`
// (a size past int64) is refused too; below 1 MiB the check is free and always passes (the
// allocator still charges those to the budget).
absl::Status CheckBytesFit(int64_t bytes, absl::FunctionRef<std::string()> what);

}  // namespace kiln

#endif  // KILN_CORE_OPS_MEMORY_CHECK_H_
