// kiln.v1.Kiln over gRPC's callback API: each call is validated, then handed to the server's
// thread pool, which compiles or executes and finishes the call. A thin layer over
// compiled_function, function_cache, sessions and graph_requests.
#ifndef KILN_SERVER_SERVICE_H_
#define KILN_SERVER_SERVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <new>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "kiln/v1/service.grpc.pb.h"
#include "server/arena_allocator.h"
#include "server/auth.h"
#include "server/calls.h"
#include "server/function_cache.h"
#include "server/grpc_context.h"
#include "server/metrics.h"
#include "server/quotas.h"
#include "server/request_budget.h"
#include "server/sessions.h"
#include "server/shm_regions.h"
#include "server/thread_pool.h"

namespace kiln::server {

class LocalLane;

// The gRPC service, and the calls layer (calls.h) beneath every transport.
class KilnService final : public v1::Kiln::CallbackService, public Calls {
 public:
  KilnService(FunctionCache& cache, SessionStore& sessions, RegionRegistry& regions,
              Metrics& metrics, ThreadPool& pool, const Authenticator& auth, ServiceLimits limits);

  using Ctx = grpc::CallbackServerContext;
  using Reactor = grpc::ServerUnaryReactor;
  Reactor* GetVersion(Ctx* ctx, const v1::GetVersionRequest* req,
                      v1::GetVersionResponse* resp) override;
  Reactor* Compile(Ctx* ctx, const v1::CompileRequest* req, v1::CompileResponse* resp) override;
  Reactor* Execute(Ctx* ctx, const v1::ExecuteRequest* req, v1::ExecuteResponse* resp) override;
  grpc::ServerBidiReactor<v1::ExecuteStreamRequest, v1::TensorChunk>* ExecuteStream(
      Ctx* ctx) override;
  Reactor* Grad(Ctx* ctx, const v1::GradRequest* req, v1::GradResponse* resp) override;
  Reactor* Optimize(Ctx* ctx, const v1::OptimizeRequest* req, v1::OptimizeResponse* resp) override;
  Reactor* Print(Ctx* ctx, const v1::PrintRequest* req, v1::PrintResponse* resp) override;
  Reactor* ImportOnnx(Ctx* ctx, const v1::ImportOnnxRequest* req,
                      v1::ImportOnnxResponse* resp) override;
  Reactor* ExportOnnx(Ctx* ctx, const v1::ExportOnnxRequest* req,
                      v1::ExportOnnxResponse* resp) override;
  Reactor* CreateSession(Ctx* ctx, const v1::CreateSessionRequest* req,
                         v1::CreateSessionResponse* resp) override;
  Reactor* DeleteSession(Ctx* ctx, const v1::DeleteSessionRequest* req,
                         v1::DeleteSessionResponse* resp) override;
  Reactor* SetShared(Ctx* ctx, const v1::SetSharedRequest* req,
                     v1::SetSharedResponse* resp) override;
  Reactor* GetShared(Ctx* ctx, const v1::GetSharedRequest* req,
                     v1::GetSharedResponse* resp) override;
  Reactor* DeleteShared(Ctx* ctx, const v1::DeleteSharedRequest* req,
                        v1::DeleteSharedResponse* resp) override;
  Reactor* ListShared(Ctx* ctx, const v1::ListSharedRequest* req,
                      v1::ListSharedResponse* resp) override;
  Reactor* GetStats(Ctx* ctx, const v1::GetStatsRequest* req, v1::GetStatsResponse* resp) override;
  Reactor* RegisterRegion(Ctx* ctx, const v1::RegisterRegionRequest* req,
                          v1::RegisterRegionResponse* resp) override;
  Reactor* UnregisterRegion(Ctx* ctx, const v1::UnregisterRegionRequest* req,
                            v1::UnregisterRegionResponse* resp) override;
  Reactor* PutTensor(Ctx* ctx, const v1::PutTensorRequest* req,
                     v1::PutTensorResponse* resp) override;
  Reactor* DeleteTensor(Ctx* ctx, const v1::DeleteTensorRequest* req,
                        v1::DeleteTensorResponse* resp) override;

  // An execution of `function_id` on decoded arguments, for every Execute (calls.h).
  absl::StatusOr<Execution> RunExecution(const Tenant& tenant, const std::string& function_id,
                                         const std::string& session, std::vector<Tensor> args,
                                         std::function<absl::Status()> interrupt,
                                         std::shared_ptr<const RequestBudget> budget,
                                         const CallId& call_id,
                                         std::shared_ptr<const CompiledFunction> found) override;
  // Execute's work on any transport: the arguments (in messages, regions or by handle), the
  // run, then the outputs and printed values into `resp`.
  absl::Status ExecuteCall(const Tenant& tenant, const v1::ExecuteRequest& req,
                           v1::ExecuteResponse* resp, std::function<absl::Status()> interrupt,
                           const CallId& call_id,
                           std::shared_ptr<const CompiledFunction> found = nullptr) override;
  // The tenant of an `authorization` value ("Bearer <token>"; empty: none given).
  absl::StatusOr<std::shared_ptr<const Tenant>> Authenticate(
      absl::string_view authorization) const override {
    return auth_.Authenticate(authorization.empty() ? nullptr : &authorization);
  }
  // Counts and logs a finished call of any transport.
  void Record(const char* method, const absl::Status& status, const std::string& tenant) override;
  // This process's random id, on GetVersion and the lane's hello.
  const std::string& instance() const override { return instance_; }
  // True when `tenant` may see `f`: a tenant-scoped function only its own tenant.
  bool Sees(const Tenant& tenant, const CompiledFunction& f) const;
  // The same-host lane, said on GetVersion and counted on GetStats; set before the service takes
  // calls.
  void set_lane(const LocalLane* lane) { lane_ = lane; }
  // Calls started and not yet finished.
  int in_flight() const { return in_flight_.load(); }
  // Counts a call in; Handle, ExecuteStream and the lane do it for every call.
  void BeginCall() override { in_flight_.fetch_add(1); }
  // Counts a call out.
  void EndCall() override { in_flight_.fetch_sub(1); }
  // This server's per-request limits.
  const ServiceLimits& limits() const override { return limits_; }
  // The function of `id` in memory, if `tenant` may see it.
  std::shared_ptr<const CompiledFunction> Peek(const Tenant& tenant,
                                               const std::string& id) override;
  // Runs `work` on the pool.
  void Schedule(std::function<void()> work) override { pool_.Schedule(std::move(work)); }
  // A new call's budget: --max_call_bytes and --max_request_seconds, under the server's budget.
  std::shared_ptr<RequestBudget> NewBudget(const char* method) const override {
    return std::make_shared<RequestBudget>(method, limits_.budget, server_budget_);
  }

 private:
  // The calls that carry graphs keep their messages on an arena per call.
  ArenaAllocator<v1::CompileRequest, v1::CompileResponse> compile_messages_;
  ArenaAllocator<v1::GradRequest, v1::GradResponse> grad_messages_;
  ArenaAllocator<v1::OptimizeRequest, v1::OptimizeResponse> optimize_messages_;
  ArenaAllocator<v1::PrintRequest, v1::PrintResponse> print_messages_;
  ArenaAllocator<v1::ImportOnnxRequest, v1::ImportOnnxResponse> import_onnx_messages_;
  ArenaAllocator<v1::ExportOnnxRequest, v1::ExportOnnxResponse> export_onnx_messages_;

  // Authenticates the call, then finishes it with fn(tenant)'s status; on the pool when
  // `offload`, else inline.
  template <typename Fn>
  Reactor* Handle(const char* method, Ctx* ctx, bool offload, Fn fn);
  // Finishes a call begun by HandleAsync: called once, from any thread.
  using CallDone = std::function<void(const absl::Status&)>;
  // Authenticates the call, then calls fn(tenant, done) inline; the call finishes when fn, or
  // what it starts, calls done (or with what fn throws).
  template <typename Fn>
  Reactor* HandleAsync(const char* method, Ctx* ctx, Fn fn);
  // Compile's work: the tenant's quota, the request cache (answered inline, a hash away), then on
  // the pool the job (decoded, validated, identified in its scope) and the function cache, which
  // may answer later.
  void StartCompile(Ctx* ctx, const v1::CompileRequest& req, v1::CompileResponse* resp,
                    std::shared_ptr<const Tenant> tenant, CallDone done);
  // Records a compile's latency by source, and logs one that compiled.
  void LogCompile(const CompiledFunction& f, CacheSource source,
                  std::chrono::steady_clock::time_point start);
  // Counts, logs and finishes a call begun with BeginCall.
  void Finish(const char* method, Reactor* reactor, const absl::Status& status,
              const std::string& tenant);
  // True when a function is one tenant's alone: every function with --cache_scope=tenant, and a
  // profiled one always, since its profile counts that tenant's calls.
  bool TenantScoped(bool profile) const { return limits_.tenant_cache || profile; }
  // The scope of a compile of `tenant`'s: that tenant when TenantScoped, else none.
  TenantScope ScopeOf(const Tenant& tenant, bool profile) const {
    return TenantScoped(profile) ? TenantScope(tenant.name) : std::nullopt;
  }
  // True for a call worth no thread hop (see service.cc).
  bool RunsInline(const std::shared_ptr<const CompiledFunction>& f,
                  const v1::ExecuteRequest& req) const;
  // The function of `id` if the tenant may see it: a tenant-scoped function only by its tenant.
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> FindFor(
      const Tenant& tenant, const std::string& id,
      std::shared_ptr<const CompiledFunction> found = nullptr);

  FunctionCache& cache_;
  SessionStore& sessions_;
  RegionRegistry& regions_;
  Metrics& metrics_;
  ThreadPool& pool_;
  const Authenticator& auth_;
  const ServiceLimits limits_;
  const std::shared_ptr<MemoryBudget> server_budget_;  // null: no limit across calls
  Quotas quotas_;
  const std::string instance_;
  const LocalLane* lane_ = nullptr;
  std::atomic<int> executions_{0};
  std::atomic<int> in_flight_{0};
};

}  // namespace kiln::server

#endif  // KILN_SERVER_SERVICE_H_
