// The calls layer as a transport sees it, with nothing of gRPC: authentication, the limits, the
// functions in memory, the pool, a call's budget, Execute's work, in-flight accounting and the
// record of each call. The three adapters (gRPC's unary calls in service.cc, ExecuteStream in
// execute_stream.cc, the same-host lane in local_lane.cc) depend on this, not on the gRPC service
// that implements it (KilnService).
#ifndef KILN_SERVER_CALLS_H_
#define KILN_SERVER_CALLS_H_

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/tensor/tensor.h"
#include "kiln/v1/service.pb.h"
#include "server/auth.h"
#include "server/compiled_function.h"
#include "server/request_budget.h"

namespace kiln::server {

// Per-request limits; exceeding one is RESOURCE_EXHAUSTED.
struct ServiceLimits {
  int64_t max_nodes = 100000;                   // nodes and node outputs per graph
  int64_t max_tensor_bytes = int64_t{1} << 30;  // bytes per tensor
  int max_concurrent_executions = 64;           // executions at once, all tenants together
  // Bytes of values that Print ops may show in one call; the rest are left out and counted.
  int64_t max_printed_bytes = int64_t{16} << 20;
  BudgetLimits budget;  // per call: Compile, Execute, Grad, Optimize and Print
  // Tensor bytes all calls may hold together (their budgets' parent); 0: no limit.
  int64_t max_server_bytes = 0;
  // The largest message an answer may take (--max_message_bytes); 0: no limit.
  int64_t max_message_bytes = 0;
  // Function ids and cache hits per tenant (--cache_scope=tenant) rather than shared by all.
  bool tenant_cache = false;
  // Calls whose function averages under this run on gRPC's thread, not the pool; 0: never.
  double inline_max_call_seconds = 100e-6;
};

// What an execution gave back: its outputs, and the values its Print ops showed.
struct Execution {
  std::vector<Tensor> outputs;            // as the function returned them
  std::vector<v1::PrintedValue> printed;  // as the wire carries them, in the order shown
  int64_t printed_dropped = 0;            // values left out past --max_printed_bytes
};

// What every transport's adapter calls; KilnService implements it.
class Calls {
 public:
  virtual ~Calls() = default;

  // The tenant of an `authorization` value ("Bearer <token>"; empty: none given);
  // UNAUTHENTICATED without a valid token.
  virtual absl::StatusOr<std::shared_ptr<const Tenant>> Authenticate(
      absl::string_view authorization) const = 0;
  // This server's per-request limits.
  virtual const ServiceLimits& limits() const = 0;
  // The function of `id` when it is in memory and `tenant` may see it, else nullptr (no other
  // tier is asked): what a transport checks before a call's arguments have all arrived.
  virtual std::shared_ptr<const CompiledFunction> Peek(const Tenant& tenant,
                                                       const std::string& id) = 0;
  // Runs `work` on the server's pool of workers.
  virtual void Schedule(std::function<void()> work) = 0;
  // A new call's budget: --max_call_bytes and --max_request_seconds, under the server's budget.
  virtual std::shared_ptr<RequestBudget> NewBudget(const char* method) const = 0;
  // Runs `function_id` (`found`, when the caller already has it) on arguments already decoded,
  // for every transport: the tenant's view of the function, the session, quotas and the limit of
  // executions at once, the run with `interrupt` and `budget` polled between nodes (the caller
  // holds `budget`'s BudgetScope), what Print ops showed, metrics.
  virtual absl::StatusOr<Execution> RunExecution(
      const Tenant& tenant, const std::string& function_id, const std::string& session,
      std::vector<Tensor> args, std::function<absl::Status()> interrupt,
      std::shared_ptr<const RequestBudget> budget, const CallId& call_id,
      std::shared_ptr<const CompiledFunction> found) = 0;
  // Execute's work on any transport with an ExecuteRequest: under a budget, the arguments (in
  // messages, regions or by handle), RunExecution, then the outputs and printed values into
  // `resp`. `found`, when the caller already has the function.
  virtual absl::Status ExecuteCall(const Tenant& tenant, const v1::ExecuteRequest& req,
                                   v1::ExecuteResponse* resp,
                                   std::function<absl::Status()> interrupt, const CallId& call_id,
                                   std::shared_ptr<const CompiledFunction> found) = 0;
  // Counts and logs a finished call of any transport.
  virtual void Record(const char* method, const absl::Status& status,
                      const std::string& tenant) = 0;
  // This process's random id, on GetVersion and the lane's hello.
  virtual const std::string& instance() const = 0;
  // Counts a call in: every transport does it for every call, before authenticating it.
  virtual void BeginCall() = 0;
  // Counts a call out, once it has finished.
  virtual void EndCall() = 0;
};

// fn's status, with what it throws as a status: never a crash.
template <typename Fn>
absl::Status Guarded(const char* method, Fn& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc& e) {  // a tensor over --max_tensor_bytes, or no memory left
    return absl::ResourceExhaustedError(absl::StrCat(method, ": ", e.what()));
  } catch (const std::exception& e) {  // a bug
    return absl::InternalError(absl::StrCat(method, ": ", e.what()));
  }
}

}  // namespace kiln::server

#endif  // KILN_SERVER_CALLS_H_
