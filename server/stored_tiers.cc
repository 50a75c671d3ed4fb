#include "server/stored_tiers.h"

#include "server/compiled_function.h"

namespace kiln::server {
namespace {

// The function a tier's entry for `id` holds; null when absent or unusable.
std::shared_ptr<const CompiledFunction> Decoded(const std::string& id,
                                                const absl::StatusOr<std::string>& bytes,
                                                CacheSource source) {
  if (!bytes.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> f =
      DecodeCompiled(*bytes, CacheSourceName(source));
  if (!f.ok() || (*f)->id != id) return nullptr;
  return *std::move(f);
}

}  // namespace

std::shared_ptr<const CompiledFunction> SharedFunctionTier::Find(const std::string& id) {
  std::shared_ptr<const CompiledFunction> f = Decoded(id, shared_->Load(id), source());
  if (f != nullptr) shared_->Touch(id);
  return f;
}

absl::Status SharedFunctionTier::Store(const std::shared_ptr<const CompiledFunction>& f) {
  absl::Status stored = shared_->Store(f->id, f->stored);
  if (stored.ok()) shared_->Touch(f->id);
  return stored;
}

std::shared_ptr<const CompiledFunction> DiskTier::Find(const std::string& id) {
  return Decoded(id, disk_.Load(id), source());
}

absl::Status DiskTier::Store(const std::shared_ptr<const CompiledFunction>& f) {
  return disk_.Store(f->id, f->stored);
}

}  // namespace kiln::server
