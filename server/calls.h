// The calls layer as a transport sees it, with nothing of gRPC: authentication, Execute's work,
// in-flight accounting and the record of each call. The adapters of a transport (the same-host
// lane today) depend on this, not on the gRPC service that implements it (KilnService).
#ifndef KILN_SERVER_CALLS_H_
#define KILN_SERVER_CALLS_H_

#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "kiln/v1/service.pb.h"
#include "server/auth.h"
#include "server/compiled_function.h"

namespace kiln::server {

class Calls {
 public:
  virtual ~Calls() = default;

  // The tenant of an `authorization` value ("Bearer <token>"; empty: none given);
  // UNAUTHENTICATED without a valid token.
  virtual absl::StatusOr<std::shared_ptr<const Tenant>> Authenticate(
      absl::string_view authorization) const = 0;
  // Execute's work on any transport: the arguments (in messages, regions or by handle), the
  // run with `interrupt` polled between nodes, then the outputs and printed values into `resp`.
  // `found`, when the caller already has the function.
  virtual absl::Status ExecuteCall(const Tenant& tenant, const v1::ExecuteRequest& req,
                                   v1::ExecuteResponse* resp,
                                   std::function<absl::Status()> interrupt, const CallId& call_id,
                                   std::shared_ptr<const CompiledFunction> found) = 0;
  // Counts and logs a finished call of any transport.
  virtual void Record(const char* method, const absl::Status& status,
                      const std::string& tenant) = 0;
  // This process's random id, on GetVersion and the lane's hello.
  virtual const std::string& instance() const = 0;
  // Counts a call in (Begin) and out (End): every transport does it for every call.
  virtual void BeginCall() = 0;
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
