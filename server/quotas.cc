#include "server/quotas.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "proto/convert/error_reason.h"

namespace kiln::server {

absl::Status Quotas::TakeCompile(const Tenant& tenant) {
  const double rate = tenant.quota.compiles_per_second;
  if (rate <= 0) return absl::OkStatus();
  const double burst = std::max(1.0, rate);
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mutex_);
  Use& use = use_[tenant.name];
  use.compiles =
      use.compiles < 0
          ? burst
          : std::min(burst, use.compiles + absl::ToDoubleSeconds(now - use.refilled) * rate);
  use.refilled = now;
  if (use.compiles < 1) {
    return WithReason(absl::ResourceExhaustedError(
                          absl::StrCat("tenant '", tenant.name, "' is over its quota of ", rate,
                                       " compiles per second (compiles_per_second=); retry later")),
                      v1::QUOTA_EXCEEDED,
                      {{"quota", "compiles_per_second"}, {"tenant", tenant.name}});
  }
  use.compiles -= 1;
  return absl::OkStatus();
}

absl::Status Quotas::BeginExecution(const Tenant& tenant) {
  if (tenant.quota.executions <= 0) return absl::OkStatus();  // nothing to count
  absl::MutexLock lock(&mutex_);
  Use& use = use_[tenant.name];
  if (use.executions >= tenant.quota.executions) {
    return WithReason(
        absl::ResourceExhaustedError(absl::StrCat(
            "tenant '", tenant.name, "' already runs its quota of ", tenant.quota.executions,
            " executions at once (executions=); retry later")),
        v1::QUOTA_EXCEEDED, {{"quota", "executions"}, {"tenant", tenant.name}});
  }
  ++use.executions;
  return absl::OkStatus();
}

void Quotas::EndExecution(const Tenant& tenant) {
  if (tenant.quota.executions <= 0) return;  // never counted in
  absl::MutexLock lock(&mutex_);
  --use_[tenant.name].executions;
}

}  // namespace kiln::server
