// The C++ client of a Kiln server: build graphs with core's Aesara-like DSL, then compile,
// execute, differentiate, optimize and print them on the server. Shared variables (kiln::shared)
// live in the client's session on the server; the function's updates replace them there.
#ifndef KILN_CLIENT_CPP_CLIENT_H_
#define KILN_CLIENT_CPP_CLIENT_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/var.h"
#include "core/rewrite/mode.h"
#include "core/compile/function.h"
#include "core/tensor/tensor.h"
#include "kiln/v1/service.pb.h"

namespace kiln::client {

struct CompileOptions {
  OptimizerMode mode = OptimizerMode::kFastRun;
  // (shared variable, new value) pairs, applied on the server after every output is computed.
  std::vector<std::pair<Var, Var>> updates;
  OnUnusedInput on_unused_input = OnUnusedInput::kRaise;
};

// A function compiled on the server. Keeps its request, so that Execute can compile it again
// when the server has evicted it (NOT_FOUND) or restarted.
struct RemoteFunction {
  std::string id;
  std::string source;  // where the server found it: "compiled", "memory" or "disk"
  v1::FunctionSignature signature;
  std::shared_ptr<const v1::CompileRequest> request;
  std::vector<Var> shared;  // the shared variables it reads, bound by name in the session
  // The `kiln-route` of its calls behind a front: its session when it reads shared variables,
  // else a hash of its graph, so that one replica compiles and runs it.
  std::string route;
  // The outputs' bytes at the last call: the room Execute keeps for them in a shared-memory
  // region.
  uint64_t output_bytes = 0;
};

// How the client proves who it is and whom it talks to. Empty fields are not used; with no TLS
// file the connection is plaintext.
struct Credentials {
  std::string token;     // sent as `authorization: Bearer <token>`
  std::string tls_ca;    // PEM file of the CA that signed the server's certificate
  std::string tls_cert;  // PEM files of this client's certificate and key: mutual TLS
  std::string tls_key;
  // KILN_TOKEN, KILN_TLS_CA, KILN_TLS_CERT and KILN_TLS_KEY.
  static Credentials FromEnvironment();
};

class LaneChannel;
class ShmChannel;

class Client {
 public:
  // Connects to host:port and checks the protocol version (FAILED_PRECONDITION on a mismatch).
  static absl::StatusOr<std::unique_ptr<Client>> Connect(
      const std::string& address, const Credentials& credentials = Credentials::FromEnvironment());
  ~Client();

  // Compiles `outputs` as a function of `inputs`; shared variables in the graph become session
  // bindings, and their values are sent to the session the first time.
  absl::StatusOr<RemoteFunction> Compile(const std::vector<Var>& inputs,
                                         const std::vector<Var>& outputs,
                                         const CompileOptions& options = {});
  // Runs f on one tensor per input, compiling it again if the server no longer has it. When the
  // server is on this host (a loopback address; KILN_SHM=off: never, on: always), the tensors
  // go through a shared-memory region of the session instead of messages, and the call over the
  // server's same-host lane instead of gRPC (KILN_LANE, lane_channel.h).
  absl::StatusOr<std::vector<Tensor>> Execute(RemoteFunction& f, const std::vector<Tensor>& args);
  // Execute through ExecuteStream: tensors of any size, sent and received in chunks.
  absl::StatusOr<std::vector<Tensor>> ExecuteStreamed(RemoteFunction& f,
                                                      const std::vector<Tensor>& args);

  // grad(cost, wrt) computed by the server, as variables of the caller's graph.
  absl::StatusOr<std::vector<Var>> Grad(const Var& cost, const std::vector<Var>& wrt);
  // The outputs after the server's optimizer (their inputs are the caller's variables).
  absl::StatusOr<std::vector<Var>> Optimize(const std::vector<Var>& outputs,
                                            OptimizerMode mode = OptimizerMode::kFastRun);
  // dprint text (format "dprint"), Graphviz DOT ("dot") or pp text ("pp") of a graph or of a
  // compiled function.
  absl::StatusOr<std::string> Print(const std::vector<Var>& outputs,
                                    const std::string& format = "dprint");
  absl::StatusOr<std::string> Print(const RemoteFunction& f, const std::string& format = "dprint");

  // A shared variable's value in the session, and its replacement.
  absl::StatusOr<Tensor> GetValue(const Var& shared_var);
  absl::Status SetValue(const Var& shared_var, const Tensor& value);
  // The session holding this client's shared variables (created on first use).
  absl::StatusOr<std::string> Session();

  absl::StatusOr<v1::GetStatsResponse> Stats();
  absl::StatusOr<v1::GetVersionResponse> Version();

 private:
  struct Stub;
  explicit Client(std::unique_ptr<Stub> stub);
  absl::StatusOr<RemoteFunction> CompileRequest(std::shared_ptr<const v1::CompileRequest> request,
                                                std::vector<Var> shared);
  // Registers a shared-memory object as the session's region (ShmChannel::Registrar).
  absl::Status RegisterRegion(const std::string& session, const std::string& shm_name,
                              uint64_t bytes);
  std::unique_ptr<Stub> stub_;
  std::unique_ptr<ShmChannel> shm_;
  std::unique_ptr<LaneChannel> lane_;  // Execute over the server's same-host lane
  std::mutex shm_mutex_;  // one call in the region at a time; the others send messages
  std::string session_;
  std::set<const void*> uploaded_;  // shared containers whose value the session has
};

}  // namespace kiln::client

#endif  // KILN_CLIENT_CPP_CLIENT_H_
