// The function cache's tiers that keep functions as their stored bytes (CompiledFunction::stored)
// and decode them on a hit, without optimizing again: the tier every replica shares (Redis) and
// the local disk.
#ifndef KILN_SERVER_STORED_TIERS_H_
#define KILN_SERVER_STORED_TIERS_H_

#include <memory>
#include <string>

#include "server/disk_cache.h"
#include "server/function_tier.h"
#include "server/shared_tier.h"

namespace kiln::server {

// The shared tier as a function tier: a load counts towards the hottest ids (SharedTier::Touch),
// and its compile lease is the cluster's.
class SharedFunctionTier final : public FunctionTier {
 public:
  explicit SharedFunctionTier(std::shared_ptr<SharedTier> shared) : shared_(std::move(shared)) {}

  CacheSource source() const override { return CacheSource::kShared; }
  // The function of `id`, touched; null when absent, corrupt, not that id, or Redis is down.
  std::shared_ptr<const CompiledFunction> Find(const std::string& id) override;
  // Stores and touches f.
  absl::Status Store(const std::shared_ptr<const CompiledFunction>& f) override;
  SharedTier* lease() override { return shared_.get(); }

 private:
  const std::shared_ptr<SharedTier> shared_;
};

// The disk tier (disk_cache.h) as a function tier.
class DiskTier final : public FunctionTier {
 public:
  explicit DiskTier(DiskCache disk) : disk_(std::move(disk)) {}

  CacheSource source() const override { return CacheSource::kDisk; }
  // The function of `id`; null when absent, corrupt or not that id.
  std::shared_ptr<const CompiledFunction> Find(const std::string& id) override;
  // Writes f's file (a full disk is an error).
  absl::Status Store(const std::shared_ptr<const CompiledFunction>& f) override;

 private:
  const DiskCache disk_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_STORED_TIERS_H_
