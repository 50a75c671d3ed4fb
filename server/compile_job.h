// A Compile request made into a job, before any optimization: its options decoded, the request
// validated, its graph built, and its identity computed from the canonical form, the tenant scope
// included. What a job becomes is in compiled_function.h.
#ifndef KILN_SERVER_COMPILE_JOB_H_
#define KILN_SERVER_COMPILE_JOB_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/compile/function.h"
#include "kiln/v1/service.pb.h"
#include "proto/convert/graph_convert.h"

namespace kiln::server {

// A validated compile request and its identity, before any optimization.
struct CompileJob {
  std::string id;              // hex SHA-256 of the canonical form and the salt
  std::string canonical_form;  // compared on every cache hit: a collision is never served
  ProtoGraph graph;            // outputs: the graph's, then the updates' new values
  v1::FunctionSignature signature;
  OptimizerMode mode = OptimizerMode::kFastRun;
  OnUnusedInput on_unused_input = OnUnusedInput::kRaise;
  CheckMode check = CheckMode::kNone;
  bool profile = false;
  // Polled while optimizing: the caller's deadline and cancellation, the request's budget.
  std::function<absl::Status()> interrupt;
};

// True when the job's function holds what its stored form cannot carry (DebugMode's unoptimized
// reference, a profile's counters): it stays in this replica's memory.
inline bool LocalOnly(const CompileJob& job) {
  return job.check == CheckMode::kDebug || job.profile;
}

// The tenant whose function a compile makes, alone (--cache_scope=tenant, or a profile); none for
// a function every client shares. A tenant's name is 1 to 64 letters, digits, '-', '_' or '.',
// or "" for the anonymous tenant.
using TenantScope = std::optional<std::string>;

// Decodes the request's options, validates the request, builds its graph and computes its id
// from the canonical form and a salt (compiler version, options, shared inputs, updates, and the
// scope's tenant). INVALID_ARGUMENT naming the defect, RESOURCE_EXHAUSTED past `limits`.
// Unscoped ids do not depend on the scope's existence: they are those of every earlier server.
absl::StatusOr<CompileJob> PrepareCompile(const v1::CompileRequest& request,
                                          const GraphLimits& limits,
                                          const TenantScope& scope = std::nullopt);

// True when a canonical form is one of `tenant`'s scoped functions.
bool ScopedTo(const std::string& canonical_form, const std::string& tenant);

// The key of the request memo (byte-identical requests): the SHA-256 of the request's bytes, in
// the scope (hex).
std::string RequestKey(const v1::CompileRequest& request, const TenantScope& scope);

}  // namespace kiln::server

#endif  // KILN_SERVER_COMPILE_JOB_H_
