#include "client/cpp/client.h"

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "client/cpp/lane_channel.h"
#include "client/cpp/shm_channel.h"
#include "core/graph/canonical.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/ops/print.h"
#include "core/runtime/shared.h"
#include "kiln/v1/service.grpc.pb.h"
#include "proto/convert/error_reason.h"
#include "proto/convert/graph_convert.h"
#include "proto/convert/options_convert.h"
#include "proto/convert/tensor_convert.h"

namespace kiln::client {
namespace {

constexpr uint32_t kProtocol = 2;
constexpr size_t kChunkBytes = size_t{1} << 20;

// The server's status, with the reason its binary details carry (proto/convert/error_reason.h).
absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return StatusFromWire(s.error_code(), s.error_message(), s.error_details());
}

// The owner-less, non-constant variables the outputs depend on (outputs first, then in the
// order core's IoToposort reaches them).
std::vector<VariablePtr> Leaves(const std::vector<VariablePtr>& outputs) {
  std::vector<VariablePtr> leaves;
  std::unordered_set<const Variable*> seen;
  auto add = [&](const VariablePtr& v) {
    if (v->owner() == nullptr && !v->is_constant() && seen.insert(v.get()).second) {
      leaves.push_back(v);
    }
  };
  for (const VariablePtr& out : outputs) add(out);
  for (Apply* node : IoToposort({}, outputs)) {
    for (const VariablePtr& in : node->inputs()) add(in);
  }
  return leaves;
}

absl::StatusOr<std::vector<VariablePtr>> Unwrap(const std::vector<Var>& vars) {
  std::vector<VariablePtr> out;
  for (const Var& v : vars) {
    if (!v.ok()) return v.status();
    out.push_back(v.ptr());
  }
  return out;
}

// The graph of `outputs` over `leaves`, sent to the server; the replies' inputs map back to
// `leaves` by position.
absl::StatusOr<v1::Graph> ToGraph(const std::vector<VariablePtr>& leaves,
                                  const std::vector<VariablePtr>& outputs) {
  return GraphToProto(std::vector<Var>(leaves.begin(), leaves.end()),
                      std::vector<Var>(outputs.begin(), outputs.end()));
}

// The outputs of a reply graph, rewired onto the caller's leaves.
absl::StatusOr<std::vector<Var>> FromGraph(const v1::Graph& g,
                                           const std::vector<VariablePtr>& leaves) {
  absl::StatusOr<ProtoGraph> graph = GraphFromProto(g);
  if (!graph.ok()) return graph.status();
  if (graph->inputs.size() != leaves.size()) {
    return absl::InternalError("the server's graph has other inputs than the request's");
  }
  std::vector<std::pair<VariablePtr, VariablePtr>> replace;
  for (size_t i = 0; i < leaves.size(); ++i)
    replace.emplace_back(graph->inputs[i].ptr(), leaves[i]);
  ASSIGN_OR_RETURN(std::vector<VariablePtr> outs, Unwrap(graph->outputs));
  absl::StatusOr<std::vector<VariablePtr>> rewired = CloneReplace(outs, replace);
  if (!rewired.ok()) return rewired.status();
  return std::vector<Var>(rewired->begin(), rewired->end());
}

// gRPC retries a call that finds a replica gone (UNAVAILABLE) on another, after a short
// backoff: a replica's death behind a front costs latency, not errors.
constexpr char kRetryPolicy[] = R"json({"methodConfig": [{
  "name": [{"service": "kiln.v1.Kiln"}],
  "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.05s", "maxBackoff": "1s",
                  "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]})json";

}  // namespace

struct Client::Stub {
  std::string authorization;  // "Bearer <token>", or empty
  // Marks a call: its token, the replica it should reach behind a front (`route`, when not
  // empty) and a call id that its retries keep, so that a retried update applies once.
  void Prepare(grpc::ClientContext& ctx, const std::string& route = "") {
    thread_local std::mt19937_64 bits{std::random_device{}()};
    if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
    if (!route.empty()) ctx.AddMetadata("kiln-route", route);
    ctx.AddMetadata("kiln-call-id", absl::StrCat(absl::Hex(bits(), absl::kZeroPad16),
                                                 absl::Hex(bits(), absl::kZeroPad16)));
  }
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Kiln::Stub> kiln;
  // Each shared variable's name in the session: its own when free, else made unique.
  std::map<const void*, std::string> shared_names;
  std::set<std::string> taken_names;

  std::string NameOf(const SharedVariable& v) {
    const void* key = v.container().get();
    if (auto it = shared_names.find(key); it != shared_names.end()) return it->second;
    std::string name = v.name().empty() ? "shared" : v.name();
    for (int k = 1; taken_names.count(name); ++k) {
      name = absl::StrCat(v.name().empty() ? "shared" : v.name(), "_", k);
    }
    taken_names.insert(name);
    shared_names[key] = name;
    return name;
  }
};

Client::Client(std::unique_ptr<Stub> stub) : stub_(std::move(stub)) {}
Client::~Client() = default;

Credentials Credentials::FromEnvironment() {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  };
  return {env("KILN_TOKEN"), env("KILN_TLS_CA"), env("KILN_TLS_CERT"), env("KILN_TLS_KEY")};
}

namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Plaintext without TLS files; else TLS, mutual with a client certificate.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsOf(
    const Credentials& c) {
  if (c.tls_ca.empty() && c.tls_cert.empty()) return grpc::InsecureChannelCredentials();
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("mutual TLS needs both KILN_TLS_CERT and KILN_TLS_KEY");
  }
  grpc::SslCredentialsOptions options;
  for (auto [path, field] : {std::pair{&c.tls_ca, &options.pem_root_certs},
                             std::pair{&c.tls_cert, &options.pem_cert_chain},
                             std::pair{&c.tls_key, &options.pem_private_key}}) {
    if (path->empty()) continue;
    ASSIGN_OR_RETURN(std::string pem, ReadPem(*path));
    *field = std::move(pem);
  }
  return grpc::SslCredentials(options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const std::string& address,
                                                        const Credentials& credentials) {
  auto stub = std::make_unique<Stub>();
  if (!credentials.token.empty()) stub->authorization = "Bearer " + credentials.token;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> channel_credentials =
      ChannelCredentialsOf(credentials);
  if (!channel_credentials.ok()) return channel_credentials.status();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 1);
  args.SetServiceConfigJSON(kRetryPolicy);
  stub->channel = grpc::CreateCustomChannel(address, *channel_credentials, args);
  stub->kiln = v1::Kiln::NewStub(stub->channel);
  std::unique_ptr<Client> client(new Client(std::move(stub)));
  client->shm_ = std::make_unique<ShmChannel>(address);
  absl::StatusOr<v1::GetVersionResponse> version = client->Version();
  if (!version.ok()) {
    absl::Status failed(version.status().code(),
                        absl::StrCat("cannot reach the Kiln server at ", address, ": ",
                                     version.status().message()));
    version.status().ForEachPayload(  // the reason stays (PROTOCOL_MISMATCH)
        [&](absl::string_view url, const absl::Cord& payload) { failed.SetPayload(url, payload); });
    return failed;
  }
  Client* self = client.get();
  client->lane_ = std::make_unique<LaneChannel>(address, *version, client->stub_->authorization,
                                                [self] { return self->Version(); });
  if (client->lane_->required() && !client->lane_->usable()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "KILN_LANE=on, but the server at ", address, " offers no lane reachable from here"));
  }
  return client;
}

absl::StatusOr<v1::GetVersionResponse> Client::Version() {
  grpc::ClientContext ctx;
  stub_->Prepare(ctx);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  ctx.set_wait_for_ready(true);
  v1::GetVersionRequest req;
  req.set_client_protocol(kProtocol);
  v1::GetVersionResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->GetVersion(&ctx, req, &resp)));
  return resp;
}

absl::StatusOr<std::string> Client::Session() {
  if (!session_.empty()) return session_;
  grpc::ClientContext ctx;
  stub_->Prepare(ctx);
  v1::CreateSessionResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->CreateSession(&ctx, {}, &resp)));
  session_ = resp.session();
  return session_;
}

absl::StatusOr<RemoteFunction> Client::Compile(const std::vector<Var>& inputs,
                                               const std::vector<Var>& outputs,
                                               const CompileOptions& options) {
  ASSIGN_OR_RETURN(std::vector<VariablePtr> ins, Unwrap(inputs));
  absl::StatusOr<std::vector<VariablePtr>> outs = Unwrap(outputs);
  if (!outs.ok()) return outs.status();
  std::vector<VariablePtr> all_outs = *outs;
  for (const auto& [var, value] : options.updates) {
    if (!var.ok()) return var.status();
    if (!value.ok()) return value.status();
    if (AsShared(*var) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("updates: ", var->ToString(), " is not a shared variable"));
    }
    all_outs.push_back(value.ptr());
  }
  // Shared variables read by the graph or updated become inputs bound to the session.
  std::vector<VariablePtr> graph_inputs = ins, update_targets;
  std::vector<Var> shared;
  for (const auto& [var, value] : options.updates) update_targets.push_back(var.ptr());
  std::vector<VariablePtr> candidates = Leaves(all_outs);
  candidates.insert(candidates.end(), update_targets.begin(), update_targets.end());
  std::unordered_set<const Variable*> seen;
  for (const VariablePtr& v : graph_inputs) seen.insert(v.get());
  for (const VariablePtr& v : candidates) {
    if (AsShared(*v) != nullptr && seen.insert(v.get()).second) {
      graph_inputs.push_back(v);
      shared.push_back(v);
    }
  }
  absl::StatusOr<v1::Graph> graph = ToGraph(graph_inputs, all_outs);
  if (!graph.ok()) return graph.status();
  auto request = std::make_shared<v1::CompileRequest>();
  *request->mutable_graph() = *std::move(graph);
  v1::Graph& g = *request->mutable_graph();
  for (size_t i = ins.size(); i < graph_inputs.size(); ++i) {
    g.mutable_inputs(static_cast<int>(i))->set_shared(stub_->NameOf(*AsShared(*graph_inputs[i])));
  }
  for (size_t u = 0; u < options.updates.size(); ++u) {
    v1::Update* update = request->add_updates();
    const Variable* target = options.updates[u].first.ptr().get();
    for (size_t i = 0; i < graph_inputs.size(); ++i) {
      if (graph_inputs[i].get() == target) update->set_input(static_cast<uint32_t>(i));
    }
    *update->mutable_value() = g.outputs(static_cast<int>(outs->size() + u));
  }
  g.mutable_outputs()->DeleteSubrange(static_cast<int>(outs->size()),
                                      g.outputs_size() - static_cast<int>(outs->size()));
  request->set_mode(ToProto(options.mode));
  request->set_on_unused_input(ToProto(options.on_unused_input));
  // The session gets each shared variable's local value the first time.
  for (const Var& v : shared) {
    const SharedVariable* sv = AsShared(*v);
    if (uploaded_.count(sv->container().get())) continue;
    absl::StatusOr<Tensor> value = get_value(v);
    if (!value.ok()) return value.status();
    RETURN_IF_ERROR(SetValue(v, *value));
  }
  return CompileRequest(std::move(request), std::move(shared));
}

absl::StatusOr<RemoteFunction> Client::CompileRequest(
    std::shared_ptr<const v1::CompileRequest> request, std::vector<Var> shared) {
  std::string route;
  if (!shared.empty()) {
    ASSIGN_OR_RETURN(std::string session, Session());
    route = session;
  } else {
    route = Sha256Hex(request->SerializeAsString()).substr(0, 32);
  }
  grpc::ClientContext ctx;
  stub_->Prepare(ctx, route);
  v1::CompileResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->Compile(&ctx, *request, &resp)));
  RemoteFunction f;
  f.id = resp.function_id();
  f.source = resp.source();
  f.signature = resp.signature();
  f.request = std::move(request);
  f.shared = std::move(shared);
  f.route = std::move(route);
  return f;
}

namespace {

// Writes a value a Print op showed on the server to standard output, as Print does in-process.
absl::Status ShowPrinted(const v1::PrintedValue& printed) {
  ASSIGN_OR_RETURN(Tensor value, FromProto(printed.value()));
  std::cout << PrintedText(
      {printed.message(), {printed.attrs().begin(), printed.attrs().end()}, std::move(value)});
  return absl::OkStatus();
}

void ShowDropped(int64_t dropped) {
  if (dropped > 0) {
    std::cerr << "kiln: " << dropped
              << " printed values were left out: they exceed the server's --max_printed_bytes\n";
  }
}

}  // namespace

absl::Status Client::RegisterRegion(const std::string& session, const std::string& shm_name,
                                    uint64_t bytes) {
  v1::RegisterRegionRequest req;
  req.set_session(session);
  req.set_region(ShmChannel::kRegion);
  req.set_shm_name(shm_name);
  req.set_byte_size(bytes);
  grpc::ClientContext ctx;
  stub_->Prepare(ctx, session);
  v1::RegisterRegionResponse resp;
  return FromGrpc(stub_->kiln->RegisterRegion(&ctx, req, &resp));
}

absl::StatusOr<std::vector<Tensor>> Client::Execute(RemoteFunction& f,
                                                    const std::vector<Tensor>& args) {
  v1::ExecuteRequest req;
  if (!f.shared.empty()) {
    ASSIGN_OR_RETURN(std::string session, Session());
    req.set_session(session);
  }
  // The region, unless another thread's call has it.
  std::unique_lock<std::mutex> shm_lock(shm_mutex_, std::try_to_lock);
  bool in_region = false;
  if (shm_lock.owns_lock() && shm_->enabled()) {
    // The session only for a call through the region (a small call goes in messages).
    auto registrar = [&](const std::string& name, uint64_t bytes) -> absl::Status {
      ASSIGN_OR_RETURN(std::string session, Session());
      return RegisterRegion(session, name, bytes);
    };
    ASSIGN_OR_RETURN(in_region, shm_->Fill(args, f.output_bytes, registrar, req));
    if (in_region) {
      ASSIGN_OR_RETURN(std::string session, Session());
      req.set_session(session);
    }
  }
  auto to_messages = [&] {
    req.clear_arg_refs();
    req.clear_output_region();
    for (const Tensor& t : args) *req.add_args() = ToProto(t);
  };
  if (!in_region) to_messages();
  for (int attempt = 0;; ++attempt) {
    req.set_function_id(f.id);
    v1::ExecuteResponse resp;
    absl::Status s;
    if (auto on_lane = lane_->Execute(req); on_lane.has_value()) {
      s = on_lane->status();
      if (s.ok()) resp = std::move(**on_lane);
    } else {
      grpc::ClientContext ctx;
      // A region lives on the replica of the session's calls.
      stub_->Prepare(ctx, in_region ? req.session() : f.route.empty() ? f.id : f.route);
      s = FromGrpc(stub_->kiln->Execute(&ctx, req, &resp));
    }
    if (!s.ok() && attempt < 2) {
      const v1::ErrorReason reason = ReasonOf(s);
      if (reason == v1::FUNCTION_NOT_FOUND && f.request != nullptr) {  // evicted or restarted
        ASSIGN_OR_RETURN(RemoteFunction again, CompileRequest(f.request, f.shared));
        f = std::move(again);
      } else if (!(in_region && reason == v1::REGION_UNKNOWN)) {
        return s;
      }
      if (in_region) {  // this call goes in messages to the function's replica
        shm_->Forget();
        in_region = false;
        to_messages();
      }
      continue;
    }
    if (!s.ok()) return s;
    for (const v1::PrintedValue& p : resp.printed()) RETURN_IF_ERROR(ShowPrinted(p));
    ShowDropped(resp.printed_dropped());
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     in_region ? shm_->Outputs(resp) : FromProto(resp.outputs()));
    f.output_bytes = 0;
    for (const Tensor& t : out) f.output_bytes += static_cast<uint64_t>(t.nbytes()) + 64;
    return out;
  }
}

absl::StatusOr<std::vector<Tensor>> Client::ExecuteStreamed(RemoteFunction& f,
                                                            const std::vector<Tensor>& args) {
  grpc::ClientContext ctx;
  stub_->Prepare(ctx, f.route.empty() ? f.id : f.route);
  auto stream = stub_->kiln->ExecuteStream(&ctx);
  v1::ExecuteStreamRequest head;
  head.mutable_request()->set_function_id(f.id);
  if (!f.shared.empty()) {
    ASSIGN_OR_RETURN(std::string session, Session());
    head.mutable_request()->set_session(session);
  }
  bool open = stream->Write(head);
  for (size_t i = 0; i < args.size() && open; ++i) {
    const Tensor t = args[i].Contiguous();
    const size_t total = static_cast<size_t>(t.nbytes());
    size_t offset = 0;
    do {
      v1::ExecuteStreamRequest msg;
      v1::TensorChunk* c = msg.mutable_chunk();
      c->set_index(static_cast<uint32_t>(i));
      if (offset == 0) {
        c->set_dtype(ToProto(t.dtype()));
        for (int64_t d : t.shape()) c->add_shape(d);
      }
      c->set_offset(offset);
      const size_t n = std::min(kChunkBytes, total - offset);
      c->set_data(static_cast<const char*>(t.raw_data()) + offset, n);
      offset += n;
      open = stream->Write(msg);
    } while (offset < total && open);
  }
  stream->WritesDone();
  std::vector<v1::Tensor> outs;
  v1::TensorChunk chunk;
  while (stream->Read(&chunk)) {
    if (chunk.has_printed() || chunk.printed_dropped() > 0) {
      if (chunk.has_printed()) RETURN_IF_ERROR(ShowPrinted(chunk.printed()));
      ShowDropped(chunk.printed_dropped());
      continue;
    }
    if (chunk.index() == outs.size()) {
      outs.emplace_back();
      outs.back().set_dtype(chunk.dtype());
      *outs.back().mutable_shape() = chunk.shape();
    }
    outs.back().mutable_data()->append(chunk.data());
  }
  RETURN_IF_ERROR(FromGrpc(stream->Finish()));
  std::vector<Tensor> out;
  for (const v1::Tensor& t : outs) {
    ASSIGN_OR_RETURN(Tensor v, FromProto(t));
    out.push_back(std::move(v));
  }
  return out;
}

absl::StatusOr<std::vector<Var>> Client::Grad(const Var& cost, const std::vector<Var>& wrt) {
  std::vector<Var> all = {cost};
  all.insert(all.end(), wrt.begin(), wrt.end());
  ASSIGN_OR_RETURN(std::vector<VariablePtr> outs, Unwrap(all));
  const std::vector<VariablePtr> leaves = Leaves(outs);
  absl::StatusOr<v1::Graph> graph = ToGraph(leaves, outs);
  if (!graph.ok()) return graph.status();
  v1::GradRequest req;
  for (size_t i = 1; i < all.size(); ++i) *req.add_wrt() = graph->outputs(static_cast<int>(i));
  graph->mutable_outputs()->DeleteSubrange(1, graph->outputs_size() - 1);
  *req.mutable_graph() = *std::move(graph);
  grpc::ClientContext ctx;
  stub_->Prepare(ctx);
  v1::GradResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->Grad(&ctx, req, &resp)));
  for (const std::string& w : resp.warnings()) std::cerr << "kiln: grad: " << w << "\n";
  return FromGraph(resp.graph(), leaves);
}

absl::StatusOr<std::vector<Var>> Client::Optimize(const std::vector<Var>& outputs,
                                                  OptimizerMode mode) {
  ASSIGN_OR_RETURN(std::vector<VariablePtr> outs, Unwrap(outputs));
  const std::vector<VariablePtr> leaves = Leaves(outs);
  absl::StatusOr<v1::Graph> graph = ToGraph(leaves, outs);
  if (!graph.ok()) return graph.status();
  v1::OptimizeRequest req;
  *req.mutable_graph() = *std::move(graph);
  req.set_mode(ToProto(mode));
  grpc::ClientContext ctx;
  stub_->Prepare(ctx);
  v1::OptimizeResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->Optimize(&ctx, req, &resp)));
  return FromGraph(resp.graph(), leaves);
}

namespace {

absl::StatusOr<v1::PrintRequest::Format> ParseFormat(const std::string& format) {
  if (format == "dprint") return v1::PrintRequest::DPRINT;
  if (format == "dot") return v1::PrintRequest::DOT;
  if (format == "pp") return v1::PrintRequest::PP;
  return absl::InvalidArgumentError(
      absl::StrCat("print format '", format, "': expected dprint, dot or pp"));
}

}  // namespace

absl::StatusOr<std::string> Client::Print(const std::vector<Var>& outputs,
                                          const std::string& format) {
  ASSIGN_OR_RETURN(v1::PrintRequest::Format f, ParseFormat(format));
  absl::StatusOr<std::vector<VariablePtr>> outs = Unwrap(outputs);
  if (!outs.ok()) return outs.status();
  absl::StatusOr<v1::Graph> graph = ToGraph(Leaves(*outs), *outs);
  if (!graph.ok()) return graph.status();
  v1::PrintRequest req;
  *req.mutable_graph() = *std::move(graph);
  req.set_format(f);
  grpc::ClientContext ctx;
  stub_->Prepare(ctx);
  v1::PrintResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->Print(&ctx, req, &resp)));
  return resp.text();
}

absl::StatusOr<std::string> Client::Print(const RemoteFunction& fn, const std::string& format) {
  ASSIGN_OR_RETURN(v1::PrintRequest::Format f, ParseFormat(format));
  v1::PrintRequest req;
  req.set_function_id(fn.id);
  req.set_format(f);
  grpc::ClientContext ctx;
  stub_->Prepare(ctx);
  v1::PrintResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->Print(&ctx, req, &resp)));
  return resp.text();
}

absl::StatusOr<Tensor> Client::GetValue(const Var& shared_var) {
  if (!shared_var.ok()) return shared_var.status();
  const SharedVariable* sv = AsShared(*shared_var);
  if (sv == nullptr) return absl::InvalidArgumentError("GetValue: not a shared variable");
  if (!uploaded_.count(sv->container().get())) return get_value(shared_var);
  ASSIGN_OR_RETURN(std::string session, Session());
  v1::GetSharedRequest req;
  req.set_session(session);
  req.set_name(stub_->NameOf(*sv));
  grpc::ClientContext ctx;
  stub_->Prepare(ctx, session);
  v1::GetSharedResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->GetShared(&ctx, req, &resp)));
  return FromProto(resp.value());
}

absl::Status Client::SetValue(const Var& shared_var, const Tensor& value) {
  if (!shared_var.ok()) return shared_var.status();
  const SharedVariable* sv = AsShared(*shared_var);
  if (sv == nullptr) return absl::InvalidArgumentError("SetValue: not a shared variable");
  RETURN_IF_ERROR(set_value(shared_var, value));
  ASSIGN_OR_RETURN(std::string session, Session());
  v1::SetSharedRequest req;
  req.set_session(session);
  req.set_name(stub_->NameOf(*sv));
  *req.mutable_value() = ToProto(value);
  grpc::ClientContext ctx;
  stub_->Prepare(ctx, session);
  v1::SetSharedResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->SetShared(&ctx, req, &resp)));
  uploaded_.insert(sv->container().get());
  return absl::OkStatus();
}

absl::StatusOr<v1::GetStatsResponse> Client::Stats() {
  grpc::ClientContext ctx;
  stub_->Prepare(ctx);
  v1::GetStatsResponse resp;
  RETURN_IF_ERROR(FromGrpc(stub_->kiln->GetStats(&ctx, {}, &resp)));
  return resp;
}

}  // namespace kiln::client
