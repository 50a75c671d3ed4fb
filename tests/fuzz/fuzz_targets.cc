#include "tests/fuzz/fuzz_targets.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor/check.h"
#include "core/tensor/allocator.h"
#include "core/tensor/call_limits.h"
#include "core/compile/function.h"
#include "google/protobuf/stubs/logging.h"
#include "proto/convert/function_convert.h"
#include "proto/convert/tensor_convert.h"
#include "server/auth.h"
#include "server/compiled_function.h"
#include "server/disk_cache.h"
#include "server/function_cache.h"
#include "server/graph_requests.h"
#include "server/local_lane.h"
#include "server/log.h"
#include "server/service.h"
#include "server/sessions.h"
#include "tests/fuzz/seeds.h"

namespace kiln::fuzz {
namespace {

using server::CompiledFunction;

// Small enough that one input cannot take the machine: graphs, constants, tensors, arguments.
constexpr GraphLimits kLimits{.max_nodes = 2000, .max_constant_bytes = 1 << 20};
constexpr int64_t kMaxTensorBytes = 1 << 20;
constexpr size_t kMaxBufferBytes = 8 << 20;
constexpr int64_t kMaxArgElements = 1024;

// Once per process: the buffer cap (a larger tensor throws BufferLimitExceeded, which the
// targets catch: the server answers RESOURCE_EXHAUSTED) and no protobuf parse-error logs.
void Init() {
  static const bool done = [] {
    SetMaxBufferBytes(kMaxBufferBytes);
    google::protobuf::SetLogHandler(nullptr);  // invalid UTF-8 in a string field is common here
    return true;
  }();
  (void)done;
}

// The step's status is OK. With KILN_FUZZ_VERBOSE set, also prints it (why an input stops).
bool Ok(const char* step, const absl::Status& status) {
  static const bool verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "%s: %s\n", step, status.ToString().c_str());
  return status.ok();
}
template <typename T>
bool Ok(const char* step, const absl::StatusOr<T>& result) {
  return Ok(step, result.status());
}

template <typename Message>
bool Parse(std::string_view bytes, Message& message) {
  return message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// A value of `type` with every unknown dim 2 and small elements taken from `fill` (cycled):
// 0..3 for unsigned dtypes, 0 or 1 for bool, -2..4 by halves otherwise. Nullopt for a type too
// large to fabricate.
std::optional<Tensor> MakeArg(const TensorType& type, std::string_view fill) {
  Shape shape;
  int64_t elements = 1;
  for (const StaticDim& d : type.shape()) {
    const int64_t n = d.value_or(2);
    if (n < 0 || n > kMaxArgElements) return std::nullopt;
    elements *= n;
    if (elements > kMaxArgElements) return std::nullopt;
    shape.push_back(n);
  }
  std::vector<double> values(elements);
  for (int64_t k = 0; k < elements; ++k) {
    const int b = fill.empty() ? 0 : static_cast<unsigned char>(fill[k % fill.size()]);
    const DType dtype = type.dtype();
    values[k] = IsBool(dtype) ? b % 2 : IsUnsignedInt(dtype) ? b % 4 : (b % 13 - 4) * 0.5;
  }
  absl::StatusOr<Tensor> t = Tensor::FromValues<double>(type.dtype(), std::move(shape), values);
  if (!t.ok()) return std::nullopt;
  return *std::move(t);
}

std::optional<Tensor> MakeArg(const v1::TensorType& type, std::string_view fill) {
  absl::StatusOr<TensorTypePtr> t = FromProto(type);
  if (!t.ok()) return std::nullopt;
  return MakeArg(**t, fill);
}

// Runs f on `args`, its shared inputs bound to a fresh session holding `shared`, and converts
// the outputs to messages; `interrupt` (may be empty) is polled as a server polls a call's.
void ExecuteInSession(const CompiledFunction& f, std::vector<Tensor> args,
                      std::vector<std::pair<std::string, Tensor>> shared,
                      const std::function<absl::Status()>& interrupt = {}) {
  static auto* sessions = new server::MemorySessionStore();
  absl::StatusOr<std::string> id = sessions->Create();
  KILN_CHECK(id.ok()) << id.status();
  absl::StatusOr<std::shared_ptr<server::Session>> session = sessions->Get(*id);
  KILN_CHECK(session.ok()) << session.status();
  try {
    if (Ok("Write", (*session)->Write(std::move(shared)))) {
      absl::StatusOr<std::vector<Tensor>> out =
          server::Execute(f, std::move(args), session->get(), interrupt);
      if (Ok("Execute", out)) {
        for (const Tensor& t : *out) (void)ToProto(t);  // as the service answers
      }
    }
  } catch (const std::bad_alloc&) {  // over the buffer limit or the call's budget
  }
  KILN_CHECK(sessions->Delete(*id).ok());
}

// Runs f on fabricated arguments, shared inputs included.
void RunCompiled(const CompiledFunction& f, std::string_view fill) {
  std::vector<Tensor> args;
  std::vector<std::pair<std::string, Tensor>> shared;
  for (const v1::Input& in : f.signature.inputs()) {
    std::optional<Tensor> arg = MakeArg(in.type(), fill);
    if (!arg) return;
    if (in.shared().empty()) {
      args.push_back(*std::move(arg));
    } else {
      shared.emplace_back(in.shared(), *std::move(arg));
    }
  }
  ExecuteInSession(f, std::move(args), std::move(shared));
}

// Edge values of the integer and float dtypes, which RunGraphTarget's arguments draw from.
constexpr int64_t kIntEdges[] = {0,
                                 1,
                                 -1,
                                 2,
                                 3,
                                 int64_t{1} << 31,
                                 int64_t{1} << 32,
                                 (int64_t{1} << 46) + 1,
                                 int64_t{1} << 62,
                                 std::numeric_limits<int64_t>::max(),
                                 std::numeric_limits<int64_t>::min(),
                                 -(int64_t{1} << 40)};
constexpr double kFloatEdges[] = {0.0,   -0.0,  1.0,    -1.5,     0.5,       3.0e38,
                                  1e-40, 1e300, -1e300, INFINITY, -INFINITY, NAN};

// A value of `type` for RunGraphTarget: unknown dims 0 to 3 and every element an edge value,
// both chosen by `fill`'s bytes. Nullopt for a type too large to fabricate.
std::optional<Tensor> MakeEdgeArg(const TensorType& type, std::string_view fill, size_t salt) {
  auto byte = [&](size_t k) {
    return fill.empty() ? 0u : static_cast<unsigned char>(fill[(k * 7 + salt) % fill.size()]);
  };
  Shape shape;
  int64_t elements = 1;
  for (size_t d = 0; d < type.shape().size(); ++d) {
    const int64_t n = type.shape()[d].value_or(byte(d) % 4);
    if (n < 0 || n > kMaxArgElements) return std::nullopt;
    elements *= n;
    if (elements > kMaxArgElements) return std::nullopt;
    shape.push_back(n);
  }
  const DType dtype = type.dtype();
  absl::StatusOr<Tensor> t;
  if (IsFloat(dtype) || IsComplex(dtype)) {
    std::vector<double> values(elements);
    for (int64_t k = 0; k < elements; ++k) {
      const double edge = kFloatEdges[byte(k + 8) % std::size(kFloatEdges)];
      // float32 holds no more than its range (a larger double does not convert).
      values[k] = dtype == DType::kFloat64 || dtype == DType::kComplex128 || !std::isfinite(edge)
                      ? edge
                      : std::clamp(edge, -3.0e38, 3.0e38);
    }
    t = Tensor::FromValues<double>(dtype, std::move(shape), values);
  } else {
    std::vector<int64_t> values(elements);
    for (int64_t k = 0; k < elements; ++k) {
      values[k] = IsBool(dtype) ? byte(k + 8) % 2 : kIntEdges[byte(k + 8) % std::size(kIntEdges)];
    }
    t = Tensor::FromValues<int64_t>(dtype, std::move(shape), values);
  }
  if (!t.ok()) return std::nullopt;
  return *std::move(t);
}

// RunGraphTarget's bounds: the memory a compile or a call may take, and its deadline.
constexpr int64_t kCallBudgetBytes = int64_t{8} << 20;
constexpr auto kCallDeadline = std::chrono::milliseconds(250);
// A call still running this long after its deadline has a kernel that ignores the interrupt.
constexpr auto kLateAfterDeadline = std::chrono::seconds(5);

// A deadline `kCallDeadline` from now, polled as a server polls a call's.
std::function<absl::Status()> Deadline() {
  const auto end = std::chrono::steady_clock::now() + kCallDeadline;
  return [end] {
    return std::chrono::steady_clock::now() > end ? absl::DeadlineExceededError("deadline")
                                                  : absl::OkStatus();
  };
}

// Fails (a finding) when `start` is more than kLateAfterDeadline past the deadline.
void CheckReleased(const char* step, std::chrono::steady_clock::time_point start) {
  const auto late = std::chrono::steady_clock::now() - start - kCallDeadline;
  KILN_CHECK(late < kLateAfterDeadline)
      << step << " went on " << std::chrono::duration_cast<std::chrono::milliseconds>(late).count()
      << " ms past its deadline: a kernel does not poll the call's interrupt";
}

// The functions ExecuteRequestTarget runs: the seeds, compiled once.
const std::vector<std::shared_ptr<const CompiledFunction>>& ExecuteFunctions() {
  static const auto* functions = [] {
    auto* out = new std::vector<std::shared_ptr<const CompiledFunction>>;
    for (const v1::CompileRequest& r : SeedCompileRequests()) {
      absl::StatusOr<server::CompileJob> job = server::PrepareCompile(r, kLimits);
      KILN_CHECK(job.ok());
      absl::StatusOr<std::shared_ptr<const CompiledFunction>> f = server::Compile(*job);
      KILN_CHECK(f.ok());
      out->push_back(*std::move(f));
    }
    return out;
  }();
  return *functions;
}

// A disk tier in a fresh directory under /dev/shm (tmpfs: no disk writes), removed at exit.
class ScratchDisk {
 public:
  ScratchDisk() {
    char dir[] = "/dev/shm/kiln-fuzz-XXXXXX";
    KILN_CHECK(mkdtemp(dir) != nullptr);
    cache_.emplace(*server::DiskCache::Open(dir));
  }
  ~ScratchDisk() {
    std::remove(Path().c_str());
    rmdir(cache_->dir().c_str());
  }
  const server::DiskCache& cache() const { return *cache_; }
  // The file of the entry kId.
  std::string Path() const { return cache_->dir() + "/" + kId + ".kfn"; }
  static constexpr const char* kId =
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

 private:
  std::optional<server::DiskCache> cache_;
};

// A service as kiln-server's, on the fuzzer's limits, with the seeds in its cache: what the
// lane's calls reach.
struct LaneWorld {
  LaneWorld() {
    for (const v1::CompileRequest& r : SeedCompileRequests()) {
      absl::StatusOr<server::CompileJob> job = server::PrepareCompile(r, kLimits);
      KILN_CHECK(job.ok());
      cache.GetOrCompile(*job, [this](server::FunctionCache::Result f, server::CacheSource) {
        KILN_CHECK(f.ok()) << f.status();
        ids.push_back((*f)->id);
      });
    }
    KILN_CHECK(ids.size() == SeedCompileRequests().size());
  }
  static server::ServiceLimits Limits() {
    server::ServiceLimits limits;
    limits.max_nodes = kLimits.max_nodes;
    limits.max_tensor_bytes = kMaxTensorBytes;
    limits.max_printed_bytes = 1 << 16;
    return limits;
  }

  server::FunctionCache cache{int64_t{256} << 20, std::nullopt, nullptr};
  server::MemorySessionStore sessions;
  server::RegionRegistry regions{server::RegionLimits{}};
  server::Metrics metrics;
  server::ThreadPool pool{1};
  server::Authenticator auth{server::TenantQuota{}};
  server::KilnService service{cache, sessions, regions, metrics, pool, auth, Limits()};
  std::vector<std::string> ids;  // of the seeds, in order
};

}  // namespace

void CompileRequestTarget(std::string_view bytes) {
  Init();
  v1::CompileRequest request;
  if (!Parse(bytes, request)) return;
  try {
    absl::StatusOr<server::CompileJob> job = server::PrepareCompile(request, kLimits);
    if (!Ok("PrepareCompile", job)) return;
    absl::StatusOr<std::shared_ptr<const CompiledFunction>> f = server::Compile(*job);
    if (Ok("Compile", f)) RunCompiled(**f, bytes);
  } catch (const BufferLimitExceeded&) {
  }
}

void RunGraphTarget(std::string_view bytes) {
  Init();
  v1::CompileRequest request;
  if (!Parse(bytes, request)) return;
  MemoryBudgetScope budget(
      std::make_shared<MemoryBudget>("the fuzzer's call budget", kCallBudgetBytes));
  try {
    absl::StatusOr<server::CompileJob> job = server::PrepareCompile(request, kLimits);
    if (!Ok("PrepareCompile", job)) return;
    auto start = std::chrono::steady_clock::now();
    job->interrupt = Deadline();
    absl::StatusOr<std::shared_ptr<const CompiledFunction>> f = server::Compile(*job);
    CheckReleased("Compile", start);
    if (!Ok("Compile", f)) return;
    std::vector<Tensor> args;
    std::vector<std::pair<std::string, Tensor>> shared;
    size_t salt = 0;
    for (const v1::Input& in : (*f)->signature.inputs()) {
      absl::StatusOr<TensorTypePtr> type = FromProto(in.type());
      if (!type.ok()) return;
      std::optional<Tensor> arg = MakeEdgeArg(**type, bytes, salt += 13);
      if (!arg) return;
      if (in.shared().empty()) {
        args.push_back(*std::move(arg));
      } else {
        shared.emplace_back(in.shared(), *std::move(arg));
      }
    }
    start = std::chrono::steady_clock::now();
    ExecuteInSession(**f, std::move(args), std::move(shared), Deadline());
    CheckReleased("Execute", start);
  } catch (const std::bad_alloc&) {  // over the buffer limit or the call's budget
  }
}

void ExecuteRequestTarget(std::string_view bytes) {
  Init();
  const auto& functions = ExecuteFunctions();
  if (bytes.empty()) return;
  const CompiledFunction& f = *functions[static_cast<unsigned char>(bytes[0]) % functions.size()];
  v1::ExecuteRequest request;
  if (!Parse(bytes.substr(1), request)) return;
  // As KilnService::Execute converts its arguments.
  std::vector<Tensor> args;
  for (const v1::Tensor& t : request.args()) {
    if (static_cast<int64_t>(t.data().size()) > kMaxTensorBytes) return;
    absl::StatusOr<Tensor> arg = FromProto(t, kMaxTensorBytes);
    if (!Ok("FromProto", arg)) return;
    args.push_back(*std::move(arg));
  }
  std::vector<std::pair<std::string, Tensor>> shared;
  for (const v1::Input& in : f.signature.inputs()) {
    if (!in.shared().empty()) shared.emplace_back(in.shared(), *MakeArg(in.type(), ""));
  }
  ExecuteInSession(f, std::move(args), std::move(shared));
}

void FunctionLoadTarget(std::string_view bytes) {
  Init();
  try {
    v1::Graph graph;
    if (!graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
    absl::StatusOr<Function> f = FunctionFromOptimizedGraph(graph);
    if (!Ok("Load", f)) return;
    std::vector<Tensor> args;
    for (const VariablePtr& in : f->fgraph().inputs()) {
      const TensorType* type = in->tensor_type();
      std::optional<Tensor> arg = type ? MakeArg(*type, bytes) : std::nullopt;
      if (!arg) return;
      args.push_back(*std::move(arg));
    }
    Ok("Call", (*f)(std::move(args)));
  } catch (const BufferLimitExceeded&) {
  }
}

void DiskEntryTarget(std::string_view bytes) {
  Init();
  static ScratchDisk disk;
  try {
    absl::StatusOr<std::shared_ptr<const CompiledFunction>> f = server::DecodeCompiled(bytes);
    if (Ok("DecodeCompiled", f)) RunCompiled(**f, bytes);
    // Stored and loaded back, the entry is the same bytes.
    KILN_CHECK(disk.cache().Store(ScratchDisk::kId, bytes).ok());
    absl::StatusOr<std::string> loaded = disk.cache().Load(ScratchDisk::kId);
    KILN_CHECK(loaded.ok() && *loaded == bytes) << loaded.status();
    // The bytes as the whole file: the checksum rejects them unless they are a valid entry.
    std::ofstream(disk.Path(), std::ios::binary).write(bytes.data(), bytes.size());
    loaded = disk.cache().Load(ScratchDisk::kId);
    if (Ok("Load file", loaded)) Ok("DecodeCompiled file", server::DecodeCompiled(*loaded));
  } catch (const BufferLimitExceeded&) {
  }
}

void GradRequestTarget(std::string_view bytes) {
  Init();
  v1::GradRequest request;
  if (!Parse(bytes, request)) return;
  try {
    absl::StatusOr<v1::GradResponse> grads = server::GradGraph(request, kLimits);
    if (!Ok("GradGraph", grads)) return;
    v1::OptimizeRequest optimize;
    *optimize.mutable_graph() = grads->graph();
    Ok("OptimizeGraph", server::OptimizeGraph(optimize, GraphLimits{}));
    absl::StatusOr<ProtoGraph> graph = GraphFromProto(grads->graph());
    KILN_CHECK(graph.ok()) << graph.status();  // the service's own graph converts back
    for (auto format : {v1::PrintRequest::DPRINT, v1::PrintRequest::DOT, v1::PrintRequest::PP}) {
      (void)server::PrintGraph(graph->outputs, format, /*compiled=*/true);
    }
  } catch (const BufferLimitExceeded&) {
  }
}

void OnnxImportTarget(std::string_view bytes) {
  Init();
  v1::ImportOnnxRequest request;
  request.set_model(std::string(bytes));
  request.set_trainable(!bytes.empty() && (bytes[0] & 1) != 0);
  try {
    v1::ImportOnnxResponse response;
    if (!Ok("ImportOnnxGraph", server::ImportOnnxGraph(request, kLimits, &response))) return;
    absl::StatusOr<ProtoGraph> graph = GraphFromProto(response.graph(), kLimits);
    KILN_CHECK(graph.ok()) << graph.status();  // the service's own graph converts back
    FunctionOptions options;
    options.on_unused_input = OnUnusedInput::kIgnore;
    Ok("function", function(graph->inputs, graph->outputs, options).status());
  } catch (const BufferLimitExceeded&) {
  }
}

void LaneFramesTarget(std::string_view bytes) {
  Init();
  static LaneWorld* world = [] {
    server::SetLogLevel(server::LogLevel::kError);
    return new LaneWorld();
  }();
  if (bytes.empty()) return;
  const std::string& id = world->ids[static_cast<unsigned char>(bytes[0]) % world->ids.size()];
  server::LaneCalls calls(world->service, [] { return false; });
  std::string_view rest = bytes.substr(1);
  while (rest.size() >= 2) {
    const size_t n = std::min<size_t>(
        static_cast<unsigned char>(rest[0]) | static_cast<unsigned char>(rest[1]) << 8,
        rest.size() - 2);
    std::string frame(rest.substr(2, n));
    rest.remove_prefix(2 + n);
    // An Execute without a function id runs the picked seed (ids are hashes: not guessable).
    v1::LaneRequest request;
    if (Parse(frame, request) && request.has_execute() && request.execute().function_id().empty()) {
      request.mutable_execute()->set_function_id(id);
      frame = request.SerializeAsString();
    }
    bool close = false;
    google::protobuf::Arena arena(calls.ArenaOptions());
    const v1::LaneResponse& response = *calls.Handle(frame, &close, arena);
    KILN_CHECK(response.code() >= 0 && response.code() <= 16) << response.code();
    Ok("LaneCalls",
       absl::Status(static_cast<absl::StatusCode>(response.code()), response.message()));
    if (close) return;
  }
}

void AuthMetadataTarget(std::string_view bytes) {
  if (bytes.empty()) return;
  static const std::string dir = [] {
    char pattern[] = "/tmp/kiln-fuzz-auth-XXXXXX";
    KILN_CHECK(mkdtemp(pattern) != nullptr);
    return std::string(pattern);
  }();
  const std::string path = dir + "/tokens";
  const std::string_view rest = bytes.substr(1);
  if (bytes[0] % 2 == 0) {
    static const std::unique_ptr<server::Authenticator> known = [&] {
      // The token "kiln" for the tenant "t".
      std::ofstream(path)
          << "sha256:cdfe9ad58b46226d63eb322dacd35f4f7ac38096180c87258c142e4bca9a3cf5 t\n";
      auto a = server::Authenticator::FromFile(path, {});
      KILN_CHECK(a.ok()) << a.status();
      return *std::move(a);
    }();
    const absl::string_view value(rest.data(), rest.size());
    absl::StatusOr<std::shared_ptr<const server::Tenant>> tenant = known->Authenticate(&value);
    KILN_CHECK(tenant.ok() || absl::IsUnauthenticated(tenant.status())) << tenant.status();
    return;
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(rest.data(), rest.size());
  absl::StatusOr<std::unique_ptr<server::Authenticator>> loaded =
      server::Authenticator::FromFile(path, {});
  if (!Ok("FromFile", loaded)) return;
  for (size_t start = 0; start < rest.size();) {
    size_t end = rest.find('\n', start);
    if (end == std::string_view::npos) end = rest.size();
    const absl::string_view line(rest.data() + start, end - start);
    Ok("Authenticate", (*loaded)->Authenticate(&line));
    start = end + 1;
  }
}

}  // namespace kiln::fuzz
