// Intra-op parallelism: splits a range of work across one process-wide pool of threads.
#ifndef KILN_CORE_TENSOR_PARALLEL_H_
#define KILN_CORE_TENSOR_PARALLEL_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace kiln {

// Threads that ParallelFor uses, the caller included: KILN_NUM_THREADS if set, else the cores.
int NumThreads();

// Calls fn(begin, end) on disjoint chunks covering [0, n), in parallel when n is at least
// 2 * min_chunk; otherwise inline. Returns when every chunk is done.
void ParallelFor(int64_t n, int64_t min_chunk, absl::FunctionRef<void(int64_t, int64_t)> fn);

}  // namespace kiln

#endif  // KILN_CORE_TENSOR_PARALLEL_H_
