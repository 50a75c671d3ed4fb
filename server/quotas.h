// What each tenant uses now against its quota: Compile calls per second (a token bucket holding
// up to a second's worth) and executions running at once.
#ifndef KILN_SERVER_QUOTAS_H_
#define KILN_SERVER_QUOTAS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/auth.h"

namespace kiln::server {

class Quotas {
 public:
  // Takes one Compile from the tenant's bucket; RESOURCE_EXHAUSTED naming the quota when empty.
  absl::Status TakeCompile(const Tenant& tenant);
  // Counts an execution in; RESOURCE_EXHAUSTED naming the quota when the tenant already runs
  // its quota. Every success is matched by EndExecution.
  absl::Status BeginExecution(const Tenant& tenant);
  void EndExecution(const Tenant& tenant);

 private:
  struct Use {
    double compiles = -1;  // tokens in the bucket; -1 until first used (full)
    absl::Time refilled;
    int64_t executions = 0;
  };
  absl::Mutex mutex_;
  std::map<std::string, Use> use_
      ABSL_GUARDED_BY(mutex_);  // by tenant: as many as the tokens file names
};

}  // namespace kiln::server

#endif  // KILN_SERVER_QUOTAS_H_
