// The registry of batched kernels by op class (see batch_kernel.h).
#include "core/ops/batch_kernel.h"

#include "absl/container/flat_hash_map.h"

namespace kiln {
namespace {

// The kernels by op class: written at static initialization, read-only afterwards.
absl::flat_hash_map<int, BatchKernel>& Kernels() {
  static auto* kernels = new absl::flat_hash_map<int, BatchKernel>();
  return *kernels;
}

}  // namespace

bool RegisterBatchKernel(OpClassId id, BatchKernel kernel) {
  return Kernels().emplace(static_cast<int>(id), kernel).second;
}

BatchKernel FindBatchKernel(const Op& op) {
  const auto& kernels = Kernels();
  auto it = kernels.find(static_cast<int>(op.class_id()));
  return it == kernels.end() ? nullptr : it->second;
}

}  // namespace kiln
