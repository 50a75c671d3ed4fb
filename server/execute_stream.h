// ExecuteStream on gRPC: Execute for tensors larger than one message, a thin adapter over the
// calls layer (calls.h) as the lane is.
#ifndef KILN_SERVER_EXECUTE_STREAM_H_
#define KILN_SERVER_EXECUTE_STREAM_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "kiln/v1/service.pb.h"
#include "server/calls.h"

namespace kiln::server {

// A new ExecuteStream call over `calls`, for gRPC's callback API; it deletes itself when done.
grpc::ServerBidiReactor<v1::ExecuteStreamRequest, v1::TensorChunk>* NewExecuteStream(
    Calls& calls, grpc::CallbackServerContext* ctx);

}  // namespace kiln::server

#endif  // KILN_SERVER_EXECUTE_STREAM_H_
