// What the gRPC adapters (service.cc, execute_stream.cc) read from a call's context, and how
// they answer: the rest of a call is the calls layer's (calls.h).
#ifndef KILN_SERVER_GRPC_CONTEXT_H_
#define KILN_SERVER_GRPC_CONTEXT_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/compiled_function.h"

namespace kiln::server {

// The call's `authorization` metadata (empty: none), for Calls::Authenticate.
absl::string_view AuthorizationOf(const grpc::CallbackServerContext& ctx);
// What a gRPC call's execution polls between nodes: its deadline and cancellation.
std::function<absl::Status()> CallInterrupt(grpc::CallbackServerContext* ctx);
// The call id a client sets in `kiln-call-id` metadata (see grpc_context.cc).
CallId CallIdOf(const grpc::CallbackServerContext& ctx);
// The gRPC status of an absl::Status: same code and message, and its reason as binary details.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace kiln::server

#endif  // KILN_SERVER_GRPC_CONTEXT_H_
