#include "server/service.h"

#include <unistd.h>

#include <atomic>
#include <chrono>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "core/ops/print.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/error_reason.h"
#include "proto/convert/tensor_convert.h"
#include "server/call_data.h"
#include "server/execute_stream.h"
#include "server/graph_requests.h"
#include "server/local_lane.h"
#include "server/log.h"
#include "proto/version.h"

namespace kiln::server {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::function<absl::Status()> Interrupt(grpc::CallbackServerContext* ctx,
                                        std::shared_ptr<const RequestBudget> budget) {
  return BudgetedInterrupt(CallInterrupt(ctx), std::move(budget));
}

GraphLimits GraphLimitsOf(const ServiceLimits& limits) {
  GraphLimits g;
  g.max_nodes = limits.max_nodes;
  g.max_constant_bytes = limits.max_tensor_bytes;
  return g;
}

absl::Status CheckNodes(const v1::Graph& graph, const ServiceLimits& limits) {
  if (graph.nodes_size() > limits.max_nodes) {
    return absl::ResourceExhaustedError(absl::StrCat("the graph has ", graph.nodes_size(),
                                                     " nodes, more than this server's limit of ",
                                                     limits.max_nodes));
  }
  return absl::OkStatus();
}

// A printed value as the wire carries it.
void PrintedToProto(const PrintedValue& printed, v1::PrintedValue* out) {
  out->set_message(printed.message);
  for (const std::string& a : printed.attrs) out->add_attrs(a);
  *out->mutable_value() = ToProto(printed.value);
}

}  // namespace

KilnService::KilnService(FunctionCache& cache, SessionStore& sessions, RegionRegistry& regions,
                         Metrics& metrics, ThreadPool& pool, const Authenticator& auth,
                         ServiceLimits limits)
    : cache_(cache),
      sessions_(sessions),
      regions_(regions),
      metrics_(metrics),
      pool_(pool),
      auth_(auth),
      limits_(limits),
      server_budget_(MakeServerBudget(limits.max_server_bytes)),
      instance_(RandomId()) {
  SetMessageAllocatorFor_Compile(&compile_messages_);
  SetMessageAllocatorFor_Grad(&grad_messages_);
  SetMessageAllocatorFor_Optimize(&optimize_messages_);
  SetMessageAllocatorFor_Print(&print_messages_);
  SetMessageAllocatorFor_ImportOnnx(&import_onnx_messages_);
  SetMessageAllocatorFor_ExportOnnx(&export_onnx_messages_);
}

void KilnService::Finish(const char* method, Reactor* reactor, const absl::Status& status,
                         const std::string& tenant) {
  // Outside any call's budget: an allocation gRPC makes is never refused halfway through it.
  MemoryBudgetScope outside_the_budget(nullptr);
  Record(method, status, tenant);
  reactor->Finish(ToGrpc(status));
  EndCall();
}

void KilnService::Record(const char* method, const absl::Status& status,
                         const std::string& tenant) {
  metrics_.CountRequest(method, status.code(), tenant);
  if (!status.ok()) {
    Log(status.code() == absl::StatusCode::kInternal ? LogLevel::kError : LogLevel::kDebug,
        "request failed",
        {{"method", method},
         {"tenant", tenant},
         {"code", absl::StatusCodeToString(status.code())},
         {"error", std::string(status.message())}});
  }
}

template <typename Fn>
KilnService::Reactor* KilnService::HandleAsync(const char* method, Ctx* ctx, Fn fn) {
  Reactor* reactor = ctx->DefaultReactor();
  BeginCall();
  absl::StatusOr<std::shared_ptr<const Tenant>> tenant = Authenticate(AuthorizationOf(*ctx));
  if (!tenant.ok()) {
    Finish(method, reactor, tenant.status(), "");
    return reactor;
  }
  CallDone done = [this, method, reactor, name = (*tenant)->name](const absl::Status& status) {
    Finish(method, reactor, status, name);
  };
  // What fn throws before it hands `done` on finishes the call.
  auto call = [&] {
    fn(*std::move(tenant), done);
    return absl::OkStatus();
  };
  if (absl::Status s = Guarded(method, call); !s.ok()) done(s);
  return reactor;
}

template <typename Fn>
KilnService::Reactor* KilnService::Handle(const char* method, Ctx* ctx, bool offload, Fn fn) {
  return HandleAsync(method, ctx,
                     [this, method, offload, fn = std::move(fn)](
                         std::shared_ptr<const Tenant> tenant, CallDone done) mutable {
                       auto run = [method, fn = std::move(fn), tenant = std::move(tenant),
                                   done = std::move(done)]() mutable {
                         auto call = [&] { return fn(*tenant); };
                         done(Guarded(method, call));
                       };
                       if (offload) {
                         pool_.Schedule(std::move(run));
                       } else {
                         run();
                       }
                     });
}

KilnService::Reactor* KilnService::GetVersion(Ctx* ctx, const v1::GetVersionRequest* req,
                                              v1::GetVersionResponse* resp) {
  return Handle("GetVersion", ctx, false, [this, req, resp](const Tenant& tenant) {
    resp->set_protocol(kProtocolVersion);
    if (lane_ != nullptr) {
      resp->set_local_socket(lane_->path());
      resp->set_local_pid(static_cast<uint32_t>(getpid()));
    }
    resp->set_instance(instance_);
    resp->set_compiler_version(CompilerVersion());
    resp->set_server_version(kServerVersion);
    if (req->client_protocol() != 0 && req->client_protocol() != kProtocolVersion) {
      return WithReason(absl::FailedPreconditionError(
                            absl::StrCat("this server speaks protocol ", kProtocolVersion,
                                         ", the client ", req->client_protocol())),
                        v1::PROTOCOL_MISMATCH,
                        {{"server_protocol", absl::StrCat(kProtocolVersion)},
                         {"client_protocol", absl::StrCat(req->client_protocol())}});
    }
    return absl::OkStatus();
  });
}

// The response for a function, with its stored form and optimized graph when asked for.
absl::Status FillCompileResponse(const CompiledFunction& f, CacheSource source,
                                 const v1::CompileRequest& req, v1::CompileResponse* resp) {
  resp->set_function_id(f.id);
  *resp->mutable_signature() = f.signature;
  resp->set_source(CacheSourceName(source));
  if (req.return_stored()) resp->set_stored(f.stored);
  if (req.return_optimized()) {
    const FunctionGraph& fg = f.function.fgraph();
    return GraphToProto(std::vector<Var>(fg.inputs().begin(), fg.inputs().end()),
                        std::vector<Var>(fg.outputs().begin(), fg.outputs().end()),
                        resp->mutable_optimized(), GraphForm::kCompact);
  }
  return absl::OkStatus();
}

bool KilnService::Sees(const Tenant& tenant, const CompiledFunction& f) const {
  return !TenantScoped(f.signature.profile()) || ScopedTo(f.canonical_form, tenant.name);
}

absl::StatusOr<std::shared_ptr<const CompiledFunction>> KilnService::FindFor(
    const Tenant& tenant, const std::string& id, std::shared_ptr<const CompiledFunction> found) {
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> f =
      found != nullptr ? std::move(found) : cache_.Find(id);
  if (f.ok() && !Sees(tenant, **f)) {
    return cache_.NotFound(id);  // another tenant's: as if it did not exist
  }
  return f;
}

std::shared_ptr<const CompiledFunction> KilnService::Peek(const Tenant& tenant,
                                                          const std::string& id) {
  std::shared_ptr<const CompiledFunction> f = cache_.Peek(id);
  return f != nullptr && Sees(tenant, *f) ? f : nullptr;
}

KilnService::Reactor* KilnService::Compile(Ctx* ctx, const v1::CompileRequest* req,
                                           v1::CompileResponse* resp) {
  return HandleAsync("Compile", ctx,
                     [this, ctx, req, resp](std::shared_ptr<const Tenant> tenant, CallDone done) {
                       StartCompile(ctx, *req, resp, std::move(tenant), std::move(done));
                     });
}

// Compile's phases: the quota, the request memo, then on the pool the job (decode, validate,
// canonical form in the tenant's scope), the cache (its tiers, else a compile stored in them),
// and the response.
void KilnService::StartCompile(Ctx* ctx, const v1::CompileRequest& req, v1::CompileResponse* resp,
                               std::shared_ptr<const Tenant> tenant, CallDone done) {
  const auto start = std::chrono::steady_clock::now();
  if (absl::Status s = quotas_.TakeCompile(*tenant); !s.ok()) return done(s);
  const TenantScope scope = ScopeOf(*tenant, req.profile());
  // The same request bytes as an earlier compile in the same scope: answered here.
  std::string request_key = RequestKey(req, scope);
  if (std::shared_ptr<const CompiledFunction> f = cache_.FindByRequest(request_key)) {
    absl::Status s = FillCompileResponse(*f, CacheSource::kMemory, req, resp);
    metrics_.ObserveCompile(SecondsSince(start), CacheSource::kMemory);
    return done(s);
  }
  // A call that finds the graph compiling for another caller returns its thread to the pool
  // and finishes when that compile ends.
  pool_.Schedule([this, ctx, &req, resp, start, scope, done = std::move(done),
                  request_key = std::move(request_key)]() mutable {
    std::shared_ptr<RequestBudget> budget = NewBudget("Compile");
    BudgetScope counting(*budget);
    auto job = std::make_shared<absl::StatusOr<CompileJob>>();
    auto prepare = [&]() -> absl::Status {
      *job = PrepareCompile(req, GraphLimitsOf(limits_), scope);
      if (!job->ok()) return job->status();
      (*job)->interrupt = Interrupt(ctx, budget);
      return absl::OkStatus();
    };
    if (absl::Status s = Guarded("Compile", prepare); !s.ok()) return done(s);
    auto respond = [this, &req, resp, start, job, done,
                    request_key = std::move(request_key)](FunctionCache::Result f,
                                                          CacheSource source) {
      auto answer = [&]() -> absl::Status {
        if (!f.ok()) return f.status();
        cache_.RememberRequest(request_key, (*f)->id);
        RETURN_IF_ERROR(FillCompileResponse(**f, source, req, resp));
        LogCompile(**f, source, start);
        return absl::OkStatus();
      };
      done(Guarded("Compile", answer));
    };
    cache_.GetOrCompile(**job, std::move(respond));
  });
}

void KilnService::LogCompile(const CompiledFunction& f, CacheSource source,
                             std::chrono::steady_clock::time_point start) {
  metrics_.ObserveCompile(SecondsSince(start), source);
  if (source != CacheSource::kCompiled) return;
  Log(LogLevel::kInfo, "compiled",
      {{"function_id", f.id},
       {"nodes", absl::StrCat(f.function.fgraph().num_nodes())},
       {"ms", absl::StrCat(SecondsSince(start) * 1e3)}});
}

absl::StatusOr<Execution> KilnService::RunExecution(
    const Tenant& tenant, const std::string& function_id, const std::string& session,
    std::vector<Tensor> args, std::function<absl::Status()> interrupt,
    std::shared_ptr<const RequestBudget> budget, const CallId& call_id,
    std::shared_ptr<const CompiledFunction> found) {
  const auto start = std::chrono::steady_clock::now();
  PrintCapture printed(limits_.max_printed_bytes);
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> f =
      FindFor(tenant, function_id, std::move(found));
  if (!f.ok()) return f.status();
  std::shared_ptr<Session> s;
  if (!session.empty()) {
    absl::StatusOr<std::shared_ptr<Session>> found =
        sessions_.Get(SessionKey(tenant.name, session));
    if (!found.ok()) return found.status();
    s = *std::move(found);
  }
  RETURN_IF_ERROR(quotas_.BeginExecution(tenant));
  // Counted out however the execution ends (an allocation that fails throws).
  absl::Cleanup ended = [&] {
    executions_.fetch_sub(1);
    quotas_.EndExecution(tenant);
  };
  if (executions_.fetch_add(1) >= limits_.max_concurrent_executions) {
    return absl::ResourceExhaustedError(absl::StrCat("this server already runs its limit of ",
                                                     limits_.max_concurrent_executions,
                                                     " executions; retry later"));
  }
  absl::StatusOr<std::vector<Tensor>> out =
      server::Execute(**f, std::move(args), s.get(),
                      BudgetedInterrupt(std::move(interrupt), std::move(budget)), call_id);
  metrics_.ObserveExecute(SecondsSince(start));
  if (!out.ok()) return out.status();
  Execution run{*std::move(out), {}, printed.dropped()};
  run.printed.reserve(printed.values().size());
  for (const PrintedValue& p : printed.values()) PrintedToProto(p, &run.printed.emplace_back());
  return run;
}

// True for a call worth no thread hop: small arguments (in messages and regions), and a
// function whose calls so far took under --inline_max_call on average (a first call always goes
// to the pool). Session reads, updates and resident tensors go inline only when the sessions are in
// this process's memory: a call with updates may then wait for the session's other updating
// call, which such a function's calls keep short.
bool KilnService::RunsInline(const std::shared_ptr<const CompiledFunction>& f,
                             const v1::ExecuteRequest& req) const {
  if (f == nullptr) return false;
  const bool session_data =
      !req.session().empty() || f->signature.update_inputs_size() > 0 || req.arg_refs_size() > 0;
  if (session_data && !sessions_.in_memory()) return false;
  uint64_t bytes = RegionBytes(req);
  for (const v1::Tensor& t : req.args()) bytes += t.data().size();
  return bytes <= (64 << 10) && f->function.mean_call_seconds() < limits_.inline_max_call_seconds;
}

KilnService::Reactor* KilnService::Execute(Ctx* ctx, const v1::ExecuteRequest* req,
                                           v1::ExecuteResponse* resp) {
  std::shared_ptr<const CompiledFunction> f = cache_.Peek(req->function_id());
  const bool run_inline = RunsInline(f, *req);
  if (run_inline) metrics_.CountInline();
  return Handle("Execute", ctx, !run_inline,
                [this, ctx, req, resp, f = std::move(f)](const Tenant& tenant) {
                  return ExecuteCall(tenant, *req, resp, CallInterrupt(ctx), CallIdOf(*ctx), f);
                });
}

absl::Status KilnService::ExecuteCall(const Tenant& tenant, const v1::ExecuteRequest& req,
                                      v1::ExecuteResponse* resp,
                                      std::function<absl::Status()> interrupt,
                                      const CallId& call_id,
                                      std::shared_ptr<const CompiledFunction> found) {
  // Everything the call allocates, from its arguments to its answer, is charged to its budget.
  std::shared_ptr<RequestBudget> budget = NewBudget("Execute");
  BudgetScope counting(*budget);
  const CallStores stores{regions_, sessions_, tenant.name, limits_.max_tensor_bytes};
  int64_t bytes_in = 0, bytes_out = 0;
  ASSIGN_OR_RETURN(std::vector<Tensor> args, GatherArguments(req, stores, &bytes_in));
  ASSIGN_OR_RETURN(const OutputSlice out_slice, FindOutputSlice(req, stores));
  ASSIGN_OR_RETURN(Execution run,
                   RunExecution(tenant, req.function_id(), req.session(), std::move(args),
                                std::move(interrupt), budget, call_id, std::move(found)));
  for (v1::PrintedValue& p : run.printed) *resp->add_printed() = std::move(p);
  resp->set_printed_dropped(run.printed_dropped);
  RETURN_IF_ERROR(PutOutputs(run.outputs, out_slice, limits_.max_message_bytes, resp, &bytes_out));
  metrics_.AddBytes(bytes_in, bytes_out);
  return absl::OkStatus();
}

grpc::ServerBidiReactor<v1::ExecuteStreamRequest, v1::TensorChunk>* KilnService::ExecuteStream(
    Ctx* ctx) {
  return NewExecuteStream(*this, ctx);
}

KilnService::Reactor* KilnService::Grad(Ctx* ctx, const v1::GradRequest* req,
                                        v1::GradResponse* resp) {
  return Handle("Grad", ctx, true, [this, ctx, req, resp](const Tenant& tenant) {
    RETURN_IF_ERROR(CheckNodes(req->graph(), limits_));
    std::shared_ptr<RequestBudget> budget = NewBudget("Grad");
    BudgetScope counting(*budget);
    return GradGraph(*req, GraphLimitsOf(limits_), Interrupt(ctx, budget), resp);
  });
}

KilnService::Reactor* KilnService::Optimize(Ctx* ctx, const v1::OptimizeRequest* req,
                                            v1::OptimizeResponse* resp) {
  return Handle("Optimize", ctx, true, [this, ctx, req, resp](const Tenant& tenant) {
    RETURN_IF_ERROR(CheckNodes(req->graph(), limits_));
    std::shared_ptr<RequestBudget> budget = NewBudget("Optimize");
    BudgetScope counting(*budget);
    return OptimizeGraph(*req, GraphLimitsOf(limits_), Interrupt(ctx, budget), resp);
  });
}

KilnService::Reactor* KilnService::ImportOnnx(Ctx* ctx, const v1::ImportOnnxRequest* req,
                                              v1::ImportOnnxResponse* resp) {
  return Handle("ImportOnnx", ctx, true, [this, ctx, req, resp](const Tenant& tenant) {
    std::shared_ptr<RequestBudget> budget = NewBudget("ImportOnnx");
    BudgetScope counting(*budget);
    const std::function<absl::Status()> interrupt = Interrupt(ctx, budget);
    InterruptScope polled(&interrupt);  // the importer polls it per node
    return ImportOnnxGraph(*req, GraphLimitsOf(limits_), resp);
  });
}

KilnService::Reactor* KilnService::ExportOnnx(Ctx* ctx, const v1::ExportOnnxRequest* req,
                                              v1::ExportOnnxResponse* resp) {
  return Handle("ExportOnnx", ctx, true, [this, ctx, req, resp](const Tenant& tenant) {
    RETURN_IF_ERROR(CheckNodes(req->graph(), limits_));
    std::shared_ptr<RequestBudget> budget = NewBudget("ExportOnnx");
    BudgetScope counting(*budget);
    const std::function<absl::Status()> interrupt = Interrupt(ctx, budget);
    InterruptScope polled(&interrupt);  // the exporter polls it per node
    return ExportOnnxGraph(*req, GraphLimitsOf(limits_), resp);
  });
}

KilnService::Reactor* KilnService::Print(Ctx* ctx, const v1::PrintRequest* req,
                                         v1::PrintResponse* resp) {
  return Handle("Print", ctx, true, [this, req, resp](const Tenant& tenant) {
    std::shared_ptr<RequestBudget> budget = NewBudget("Print");
    BudgetScope counting(*budget);  // gives a large print's memory back at the end
    if (req->has_graph()) {
      if (req->format() == v1::PrintRequest::PROFILE) {
        return absl::InvalidArgumentError("format PROFILE prints a function: send its function_id");
      }
      RETURN_IF_ERROR(CheckNodes(req->graph(), limits_));
      ASSIGN_OR_RETURN(ProtoGraph g, GraphFromProto(req->graph(), GraphLimitsOf(limits_)));
      ASSIGN_OR_RETURN(std::string text, PrintGraph(g.outputs, req->format(), false));
      resp->set_text(std::move(text));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const CompiledFunction> f,
                     FindFor(tenant, req->function_id()));
    if (req->format() == v1::PrintRequest::PROFILE) {
      if (!f->signature.profile()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "function ", f->id, " was not compiled with profile: it has no profile to print"));
      }
      resp->set_text(f->function.ProfileSummary());
      return absl::OkStatus();
    }
    const auto& outs = f->function.fgraph().outputs();
    ASSIGN_OR_RETURN(std::string text,
                     PrintGraph(std::vector<Var>(outs.begin(), outs.end()), req->format(), true,
                                f->function.fgraph().inputs()));
    resp->set_text(std::move(text));
    return absl::OkStatus();
  });
}

KilnService::Reactor* KilnService::CreateSession(Ctx* ctx, const v1::CreateSessionRequest*,
                                                 v1::CreateSessionResponse* resp) {
  return Handle("CreateSession", ctx, false, [this, resp](const Tenant& tenant) {
    absl::StatusOr<std::string> id =
        sessions_.Create({tenant.name, tenant.quota.sessions, tenant.quota.session_bytes});
    if (!id.ok()) return id.status();
    resp->set_session(*std::move(id));
    return absl::OkStatus();
  });
}

KilnService::Reactor* KilnService::DeleteSession(Ctx* ctx, const v1::DeleteSessionRequest* req,
                                                 v1::DeleteSessionResponse*) {
  return Handle("DeleteSession", ctx, false, [this, req](const Tenant& tenant) {
    const std::string key = SessionKey(tenant.name, req->session());
    regions_.DropSession(key);
    return sessions_.Delete(key);
  });
}

KilnService::Reactor* KilnService::RegisterRegion(Ctx* ctx, const v1::RegisterRegionRequest* req,
                                                  v1::RegisterRegionResponse* resp) {
  return Handle("RegisterRegion", ctx, false, [this, req, resp](const Tenant& tenant) {
    // Only a live session of the tenant's may hold regions.
    const std::string key = SessionKey(tenant.name, req->session());
    RETURN_IF_ERROR(sessions_.Get(key).status());
    RETURN_IF_ERROR(regions_.Register(key, req->region(), req->shm_name(), req->byte_size()));
    const absl::Duration ttl = regions_.limits().ttl;
    resp->set_ttl_ms(ttl == absl::InfiniteDuration() ? 0 : absl::ToInt64Milliseconds(ttl));
    return absl::OkStatus();
  });
}

KilnService::Reactor* KilnService::UnregisterRegion(Ctx* ctx,
                                                    const v1::UnregisterRegionRequest* req,
                                                    v1::UnregisterRegionResponse*) {
  return Handle("UnregisterRegion", ctx, false, [this, req](const Tenant& tenant) {
    return regions_.Unregister(SessionKey(tenant.name, req->session()), req->region());
  });
}

KilnService::Reactor* KilnService::PutTensor(Ctx* ctx, const v1::PutTensorRequest* req,
                                             v1::PutTensorResponse* resp) {
  return Handle("PutTensor", ctx, true, [this, req, resp](const Tenant& tenant) {
    ASSIGN_OR_RETURN(Tensor value, FromProto(req->value(), limits_.max_tensor_bytes));
    // A session of its own holds it: the tenant's session quotas, the store's byte limits,
    // expiry and replication apply as they do to shared variables.
    ASSIGN_OR_RETURN(std::string handle, sessions_.Create({tenant.name, tenant.quota.sessions,
                                                           tenant.quota.session_bytes}));
    const std::string key = SessionKey(tenant.name, handle);
    absl::Status written = [&]() -> absl::Status {
      ASSIGN_OR_RETURN(std::shared_ptr<Session> s, sessions_.Get(key));
      return s->Write({{kResidentValue, std::move(value)}});
    }();
    if (!written.ok()) {
      sessions_.Delete(key).IgnoreError();
      return written;
    }
    metrics_.AddBytes(static_cast<int64_t>(req->value().data().size()), 0);
    resp->set_handle(std::move(handle));
    return absl::OkStatus();
  });
}

KilnService::Reactor* KilnService::DeleteTensor(Ctx* ctx, const v1::DeleteTensorRequest* req,
                                                v1::DeleteTensorResponse*) {
  return Handle("DeleteTensor", ctx, false, [this, req](const Tenant& tenant) {
    return sessions_.Delete(SessionKey(tenant.name, req->handle()));
  });
}

KilnService::Reactor* KilnService::SetShared(Ctx* ctx, const v1::SetSharedRequest* req,
                                             v1::SetSharedResponse*) {
  return Handle("SetShared", ctx, false, [this, req](const Tenant& tenant) {
    if (req->name().empty()) return absl::InvalidArgumentError("SetShared: the name is empty");
    absl::StatusOr<std::shared_ptr<Session>> s =
        sessions_.Get(SessionKey(tenant.name, req->session()));
    if (!s.ok()) return s.status();
    ASSIGN_OR_RETURN(Tensor value, FromProto(req->value(), limits_.max_tensor_bytes));
    return (*s)->Write({{req->name(), std::move(value)}});
  });
}

KilnService::Reactor* KilnService::GetShared(Ctx* ctx, const v1::GetSharedRequest* req,
                                             v1::GetSharedResponse* resp) {
  return Handle("GetShared", ctx, false, [this, req, resp](const Tenant& tenant) {
    absl::StatusOr<std::shared_ptr<Session>> s =
        sessions_.Get(SessionKey(tenant.name, req->session()));
    if (!s.ok()) return s.status();
    ASSIGN_OR_RETURN(Tensor value, (*s)->Get(req->name()));
    *resp->mutable_value() = ToProto(value);
    return absl::OkStatus();
  });
}

KilnService::Reactor* KilnService::DeleteShared(Ctx* ctx, const v1::DeleteSharedRequest* req,
                                                v1::DeleteSharedResponse*) {
  return Handle("DeleteShared", ctx, false, [this, req](const Tenant& tenant) {
    absl::StatusOr<std::shared_ptr<Session>> s =
        sessions_.Get(SessionKey(tenant.name, req->session()));
    if (!s.ok()) return s.status();
    return (*s)->Delete(req->name());
  });
}

KilnService::Reactor* KilnService::ListShared(Ctx* ctx, const v1::ListSharedRequest* req,
                                              v1::ListSharedResponse* resp) {
  return Handle("ListShared", ctx, false, [this, req, resp](const Tenant& tenant) {
    absl::StatusOr<std::shared_ptr<Session>> s =
        sessions_.Get(SessionKey(tenant.name, req->session()));
    if (!s.ok()) return s.status();
    ASSIGN_OR_RETURN(auto variables, (*s)->List());
    for (const auto& [name, value] : variables) {
      *resp->add_variables() = SharedInputToProto(name, value);
    }
    return absl::OkStatus();
  });
}

KilnService::Reactor* KilnService::GetStats(Ctx* ctx, const v1::GetStatsRequest*,
                                            v1::GetStatsResponse* resp) {
  return Handle("GetStats", ctx, false, [this, resp](const Tenant& tenant) {
    const CacheStats c = cache_.stats();
    resp->set_compiles(c.compiles);
    resp->set_memory_hits(c.memory_hits);
    resp->set_disk_hits(c.disk_hits);
    resp->set_misses(c.misses);
    resp->set_evictions(c.evictions);
    resp->set_cached_functions(c.entries);
    resp->set_cached_bytes(c.bytes);
    resp->set_executions(metrics_.executions());
    resp->set_sessions(sessions_.size());
    resp->set_requests(metrics_.requests());
    resp->set_errors(metrics_.errors());
    resp->set_redis_hits(c.shared_hits);
    resp->set_lease_waits(c.lease_waits);
    resp->set_redis_up(c.shared_up);
    resp->set_shm_regions(regions_.size());
    resp->set_shm_bytes(regions_.bytes());
    resp->set_bytes_received(metrics_.bytes_received());
    resp->set_inline_executions(metrics_.inline_executions());
    resp->set_lane_connections(lane_ != nullptr ? lane_->connections() : 0);
    return absl::OkStatus();
  });
}

}  // namespace kiln::server
