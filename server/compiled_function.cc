#include "server/compiled_function.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/compile/compile_report.h"
#include "core/tensor/status_macros.h"
#include "core/ops/print.h"
#include "kiln/v1/stored.pb.h"
#include "proto/convert/function_convert.h"
#include "proto/convert/tensor_convert.h"
#include "server/graph_requests.h"
#include "server/log.h"
#include "proto/version.h"

namespace kiln::server {

namespace {

double UnixNow() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

}  // namespace

// The coarse clock (a few ns, to the kernel's tick): every call reads it.
void LastUse::Touch() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  unix_.store(static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec),
              std::memory_order_relaxed);
}

int64_t CompiledFunction::bytes() const {
  constexpr int64_t kBytesPerBuiltNode = 512;  // about, for the graph as built (kept for the console)
  return static_cast<int64_t>(stored.size() + canonical_form.size() + id.size()) + 4096 +
         kBytesPerBuiltNode * std::max(facts.nodes_before, 0);
}

namespace {

absl::StatusOr<std::shared_ptr<const CompiledFunction>> CompileOrThrow(const CompileJob& job) {
  FunctionOptions options;
  options.mode = job.mode;
  options.on_unused_input = job.on_unused_input;
  options.updated_inputs.assign(job.signature.update_inputs().begin(),
                                job.signature.update_inputs().end());
  options.check = job.check;
  options.profile = job.profile;
  options.interrupt = job.interrupt;
  const absl::Time start = absl::Now();
  CompileReportCapture captured;
  ASSIGN_OR_RETURN(Function f, Function::Make(job.graph.inputs, job.graph.outputs, options));
  FunctionFacts facts;
  facts.created_unix = UnixNow();
  facts.compile_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  facts.nodes_before = captured.report().nodes_before;
  facts.rewrites.assign(captured.report().rule_counts.begin(),
                        captured.report().rule_counts.end());
  std::sort(facts.rewrites.begin(), facts.rewrites.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  v1::StoredFunction stored;
  stored.set_format(kStoredFunctionFormat);
  stored.set_id(job.id);
  stored.set_canonical_form(job.canonical_form);
  *stored.mutable_signature() = job.signature;
  ASSIGN_OR_RETURN(*stored.mutable_optimized(), OptimizedGraphToProto(f));
  return std::make_shared<const CompiledFunction>(
      CompiledFunction{job.id, job.canonical_form, job.signature, std::move(f),
                       stored.SerializeAsString(), std::move(facts), {}, job.graph});
}

}  // namespace

absl::StatusOr<std::shared_ptr<const CompiledFunction>> Compile(const CompileJob& job) {
  // Constant folding may allocate: a tensor over the server's limit is an error, not a crash
  // of the compile other callers wait for.
  try {
    return CompileOrThrow(job);
  } catch (const std::bad_alloc& e) {
    return absl::ResourceExhaustedError(absl::StrCat("Compile: ", e.what()));
  }
}

absl::StatusOr<std::shared_ptr<const CompiledFunction>> DecodeCompiled(std::string_view bytes,
                                                                      const char* source) {
  ASSIGN_OR_RETURN(StoredFunction loaded, LoadStoredFunction(bytes, kStoredFunctionFormat));
  FunctionFacts facts;
  facts.created_unix = UnixNow();
  facts.source = source;
  return std::make_shared<const CompiledFunction>(
      CompiledFunction{loaded.stored.id(), loaded.stored.canonical_form(),
                       loaded.stored.signature(), std::move(loaded.function),
                       std::string(bytes), std::move(facts)});
}

namespace {

// Tries of an updating call whose session other replicas keep changing under it.
constexpr int kMaxUpdateAttempts = 16;

struct RunResult {
  absl::StatusOr<std::vector<Tensor>> outputs;
  int64_t version = 0;  // of the session when its variables were read
};

// One run of f on `args` and the session's values of `shared`, all outputs (updates included).
RunResult Run(const CompiledFunction& f, std::vector<Tensor> args,
              const std::vector<std::string>& shared, Session* session,
              const std::function<absl::Status()>& interrupt) {
  SessionSnapshot snapshot;
  if (!shared.empty()) {
    absl::StatusOr<SessionSnapshot> read = session->Read(shared);
    if (!read.ok()) return {read.status()};
    snapshot = *std::move(read);
  }
  const auto& inputs = f.signature.inputs();
  std::vector<Tensor> full;
  full.reserve(inputs.size());
  for (int i = 0, a = 0, s = 0; i < inputs.size(); ++i) {
    full.push_back(inputs[i].shared().empty() ? std::move(args[a++])
                                              : std::move(snapshot.values[s++]));
  }
  return {f.function.Call(std::move(full), interrupt), snapshot.version};
}

std::string EncodeOutputs(const std::vector<Tensor>& outputs) {
  v1::ExecuteResponse response;
  for (const Tensor& t : outputs) *response.add_outputs() = ToProto(t);
  return response.SerializeAsString();
}

absl::StatusOr<std::vector<Tensor>> DecodeOutputs(const std::string& bytes) {
  v1::ExecuteResponse response;
  if (!response.ParseFromString(bytes)) return absl::DataLossError("a call record is corrupt");
  return FromProto(response.outputs());
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> Execute(const CompiledFunction& f, std::vector<Tensor> args,
                                            Session* session,
                                            const std::function<absl::Status()>& interrupt,
                                            const CallId& call) {
  f.last_use.Touch();
  const auto& inputs = f.signature.inputs();
  std::vector<std::string> shared;
  for (const v1::Input& in : inputs) {
    if (!in.shared().empty()) shared.push_back(in.shared());
  }
  const size_t explicit_inputs = inputs.size() - shared.size();
  if (args.size() != explicit_inputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("the function takes ", explicit_inputs,
                     " arguments (its inputs without `shared`) but was called with ", args.size()));
  }
  if (!shared.empty() && session == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("the function reads shared variables (",
                                                      absl::StrJoin(shared, ", "),
                                                      "): Execute needs a session"));
  }
  const bool updates = f.signature.update_inputs_size() > 0;
  if (!updates) return Run(f, std::move(args), shared, session, interrupt).outputs;
  const bool recorded = !call.id.empty();
  if (recorded && call.retry) {
    if (absl::StatusOr<std::string> done = session->Recorded(call.id); done.ok()) {
      Log(LogLevel::kInfo, "a retried call gets its first attempt's outputs",
          {{"call_id", call.id}});
      return DecodeOutputs(*done);
    } else if (!absl::IsNotFound(done.status())) {
      return done.status();
    }
  }
  absl::MutexLock update_lock(&session->update_mutex());
  for (int attempt = 1;; ++attempt) {
    // What Print ops showed in a try that lost its race is shown again by the next.
    if (PrintCapture* printed = PrintCapture::Current()) printed->Clear();
    RunResult run = Run(f, args, shared, session, interrupt);  // args kept for another try
    if (!run.outputs.ok()) return run.outputs;
    std::vector<Tensor>& out = *run.outputs;
    const size_t n_out = f.signature.output_types_size();
    std::vector<std::pair<std::string, Tensor>> writes;
    for (int u = 0; u < f.signature.update_inputs_size(); ++u) {
      writes.emplace_back(inputs[f.signature.update_inputs(u)].shared(), std::move(out[n_out + u]));
    }
    out.resize(n_out);
    CallRecord record;
    if (recorded) record = {call.id, EncodeOutputs(out)};
    absl::Status written =
        session->Write(std::move(writes), run.version, recorded ? &record : nullptr);
    if (written.ok()) return run.outputs;
    if (!absl::IsAborted(written) || attempt == kMaxUpdateAttempts) return written;
    // Another replica won the race: wait a random while, longer each time, so that two
    // replicas updating one session do not keep colliding.
    thread_local std::mt19937 bits{std::random_device{}()};
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(0, 500 * attempt)(bits)));
  }
}

}  // namespace kiln::server
