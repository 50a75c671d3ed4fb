// Who calls: bearer tokens mapped to tenants (a file of token hashes, reloaded on SIGHUP), and
// each tenant's quotas. Without a tokens file every call is the anonymous tenant "".
#ifndef KILN_SERVER_AUTH_H_
#define KILN_SERVER_AUTH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace kiln::server {

// A tenant's limits; 0 means none.
struct TenantQuota {
  double compiles_per_second = 0;  // Compile calls, with bursts of up to a second's worth
  int64_t executions = 0;          // Execute and ExecuteStream calls running at once
  int64_t sessions = 0;            // sessions open at once
  int64_t session_bytes = 0;       // bytes of shared variables in all its sessions
};

struct Tenant {
  std::string name;  // "" for the anonymous tenant of a server without tokens
  TenantQuota quota;
};

class Authenticator {
 public:
  // Every call is the anonymous tenant with `quota`.
  explicit Authenticator(TenantQuota quota);
  // Tokens from `path`: one per line, `sha256:<64 hex digits of SHA-256(token)> <tenant>`, then
  // optional quotas `compiles_per_second=N executions=N sessions=N session_bytes=N` overriding
  // `defaults`; `#` starts a comment. INVALID_ARGUMENT naming the line otherwise.
  static absl::StatusOr<std::unique_ptr<Authenticator>> FromFile(std::string path,
                                                                 TenantQuota defaults);

  // Reads the file again; on an error the tokens in use stay.
  absl::Status Reload();
  // The tenant whose token `authorization` (the metadata's value, "Bearer <token>") carries;
  // UNAUTHENTICATED, without saying which tokens exist, when it is missing or unknown.
  absl::StatusOr<std::shared_ptr<const Tenant>> Authenticate(
      const absl::string_view* authorization) const;
  bool requires_token() const { return !path_.empty(); }

 private:
  using Tokens = std::map<std::string, std::shared_ptr<const Tenant>>;  // by token hash
  Authenticator(std::string path, TenantQuota defaults);
  static absl::StatusOr<Tokens> Parse(const std::string& text, const TenantQuota& defaults);

  const std::string path_;
  const TenantQuota defaults_;
  std::shared_ptr<const Tenant> anonymous_;
  mutable absl::Mutex mutex_;
  std::shared_ptr<const Tokens> tokens_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace kiln::server

#endif  // KILN_SERVER_AUTH_H_
