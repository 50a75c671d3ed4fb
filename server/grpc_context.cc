#include "server/grpc_context.h"

#include <chrono>
#include <string>

#include "absl/strings/ascii.h"
#include "proto/convert/error_reason.h"

namespace kiln::server {

absl::string_view AuthorizationOf(const grpc::CallbackServerContext& ctx) {
  const auto& metadata = ctx.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return {};
  return absl::string_view(it->second.data(), it->second.size());
}

std::function<absl::Status()> CallInterrupt(grpc::CallbackServerContext* ctx) {
  return [ctx] {
    if (ctx->IsCancelled()) return absl::CancelledError("the call was cancelled");
    if (ctx->deadline() < std::chrono::system_clock::now()) {
      return absl::DeadlineExceededError("the call's deadline passed");
    }
    return absl::OkStatus();
  };
}

// The call id a client sets in `kiln-call-id` metadata, the same on every retry of one call, so
// that a retried update is applied once (none when it is not 1 to 64 letters, digits, - or _),
// and whether this is a retry: gRPC marks one with `grpc-previous-rpc-attempts`.
CallId CallIdOf(const grpc::CallbackServerContext& ctx) {
  const auto& metadata = ctx.client_metadata();
  auto it = metadata.find("kiln-call-id");
  if (it == metadata.end() || it->second.empty() || it->second.size() > 64) return {};
  for (char c : it->second) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return {};
  }
  return {std::string(it->second.data(), it->second.size()),
          metadata.find("grpc-previous-rpc-attempts") != metadata.end()};
}

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()),
                      StatusDetails(status));
}

}  // namespace kiln::server
