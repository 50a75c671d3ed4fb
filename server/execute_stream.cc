// ExecuteStream: Execute for tensors larger than one message. The client sends the request, then
// each argument in chunks (the first chunk of a tensor carries its dtype and shape), and closes
// its side; the server runs the function on its pool and streams back what its Print ops showed
// (one message each), then the outputs in chunks. A thin adapter over the calls layer (calls.h):
// what is gRPC's or the stream's stays here, the rest is the layer's.
#include "server/execute_stream.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/tensor_convert.h"
#include "server/grpc_context.h"

namespace kiln::server {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

class ExecuteStreamReactor final
    : public grpc::ServerBidiReactor<v1::ExecuteStreamRequest, v1::TensorChunk> {
 public:
  ExecuteStreamReactor(Calls& calls, grpc::CallbackServerContext* ctx) : calls_(calls), ctx_(ctx) {
    calls_.BeginCall();
    // Before any byte of the arguments: a caller without a valid token sends none.
    absl::StatusOr<std::shared_ptr<const Tenant>> tenant =
        calls_.Authenticate(AuthorizationOf(*ctx));
    if (!tenant.ok()) {
      Fail(tenant.status());
      return;
    }
    tenant_ = *std::move(tenant);
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client has sent everything, or went away
      if (ctx_->IsCancelled()) return Fail(absl::CancelledError("ExecuteStream: cancelled"));
      calls_.Schedule([this] { Run(); });
      return;
    }
    // On gRPC's thread: nothing may escape into it (an argument's bytes may not fit in memory).
    absl::Status taken;
    try {
      taken = Take(in_);
    } catch (const std::bad_alloc& e) {
      taken = absl::ResourceExhaustedError(absl::StrCat("ExecuteStream: ", e.what()));
    }
    if (!taken.ok()) return Fail(taken);
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return Fail(absl::CancelledError("the client stopped reading"));
    // On gRPC's thread: nothing may escape into it.
    try {
      WriteNext();
    } catch (const std::bad_alloc& e) {
      Fail(absl::ResourceExhaustedError(absl::StrCat("ExecuteStream: ", e.what())));
    }
  }

  void OnDone() override {
    calls_.EndCall();
    delete this;
  }

 private:
  // Accumulates one message: the request first, then chunks in order. Each argument is checked
  // as its first chunk arrives: against the function's argument count when the function is in
  // memory (and the tenant's to see), and its declared size against the tensor and call limits,
  // before its bytes are kept.
  absl::Status Take(const v1::ExecuteStreamRequest& msg) {
    if (msg.has_request()) {
      if (has_request_) return absl::InvalidArgumentError("ExecuteStream: a second request");
      request_ = msg.request();
      has_request_ = true;
      if (auto f = calls_.Peek(*tenant_, request_.function_id())) {
        expected_args_ = 0;
        for (const v1::Input& in : f->signature.inputs()) expected_args_ += in.shared().empty();
      }
      return absl::OkStatus();
    }
    if (!has_request_)
      return absl::InvalidArgumentError("ExecuteStream: a chunk before the request");
    const v1::TensorChunk& c = msg.chunk();
    if (c.index() > args_.size() || (c.index() == args_.size() && c.offset() != 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExecuteStream: chunk of argument ", c.index(), " out of order"));
    }
    if (c.index() == args_.size()) RETURN_IF_ERROR(StartArgument(c));
    v1::Tensor& t = args_[c.index()];
    if (c.offset() != t.data().size()) {
      return absl::InvalidArgumentError(absl::StrCat("ExecuteStream: argument ", c.index(),
                                                     " chunk at offset ", c.offset(), " after ",
                                                     t.data().size(), " bytes"));
    }
    // (Chunks of an earlier argument may still come: its own declared size bounds them.)
    const int64_t declared = declared_bytes_[c.index()];
    if (static_cast<int64_t>(t.data().size() + c.data().size()) > declared) {
      return absl::InvalidArgumentError(absl::StrCat("ExecuteStream: argument ", c.index(),
                                                     " has more than the ", declared,
                                                     " bytes its dtype and shape declare"));
    }
    t.mutable_data()->append(c.data());
    return absl::OkStatus();
  }

  // Opens argument args_.size() from its first chunk, refusing one the function does not take
  // or whose declared size passes the limits.
  absl::Status StartArgument(const v1::TensorChunk& c) {
    const ServiceLimits& limits = calls_.limits();
    if (expected_args_ >= 0 && static_cast<int64_t>(c.index()) >= expected_args_) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExecuteStream: function ", request_.function_id(), " takes ",
                       expected_args_, " arguments but argument ", c.index(), " arrived"));
    }
    absl::StatusOr<DType> dtype = FromProto(c.dtype());
    if (!dtype.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExecuteStream: argument ", c.index(), ": ", dtype.status().message()));
    }
    const Shape shape(c.shape().begin(), c.shape().end());
    RETURN_IF_ERROR(CheckShape(absl::StrCat("ExecuteStream: argument ", c.index()), shape, *dtype));
    const int64_t bytes = ShapeSize(shape) * DTypeSize(*dtype);
    if (bytes > limits.max_tensor_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "argument ", c.index(), " declares ", bytes, " bytes, more than this server's limit of ",
          limits.max_tensor_bytes, " bytes per tensor"));
    }
    total_declared_ += bytes;
    if (limits.budget.max_bytes > 0 && total_declared_ > limits.budget.max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("ExecuteStream: the arguments declare ", total_declared_,
                       " bytes, more than this server's memory budget per call of ",
                       limits.budget.max_bytes, " bytes (--max_call_bytes)"));
    }
    declared_bytes_.push_back(bytes);
    args_.emplace_back();
    args_.back().set_dtype(c.dtype());
    *args_.back().mutable_shape() = c.shape();
    return absl::OkStatus();
  }

  // The call under its budget, then its answer outside it.
  void Run() {
    auto prepare = [this] { return Prepare(); };
    const absl::Status s = Guarded("ExecuteStream", prepare);
    if (!s.ok()) return Fail(s);
    try {
      WriteNext();
    } catch (const std::bad_alloc& e) {
      Fail(absl::ResourceExhaustedError(absl::StrCat("ExecuteStream: ", e.what())));
    }
  }

  // Runs the function on the arguments under the call's budget, keeping what it printed and its
  // outputs for WriteNext.
  absl::Status Prepare() {
    if (!has_request_) return absl::InvalidArgumentError("ExecuteStream: no request");
    if (ctx_->IsCancelled()) return absl::CancelledError("ExecuteStream: cancelled");
    std::shared_ptr<RequestBudget> budget = calls_.NewBudget("ExecuteStream");
    BudgetScope counting(*budget);
    std::vector<Tensor> args;
    for (size_t i = 0; i < args_.size(); ++i) {
      absl::StatusOr<Tensor> t = FromProto(args_[i], calls_.limits().max_tensor_bytes);
      if (!t.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("argument ", i, ": ", t.status().message()));
      }
      args.push_back(*std::move(t));
    }
    args_.clear();
    ASSIGN_OR_RETURN(
        Execution run,
        calls_.RunExecution(*tenant_, request_.function_id(), request_.session(), std::move(args),
                            CallInterrupt(ctx_), budget, CallIdOf(*ctx_), /*found=*/nullptr));
    for (v1::PrintedValue& p : run.printed) {
      *printed_.emplace_back().mutable_printed() = std::move(p);
    }
    if (run.printed_dropped > 0) printed_.emplace_back().set_printed_dropped(run.printed_dropped);
    for (Tensor& t : run.outputs) outputs_.push_back(t.Contiguous());
    return absl::OkStatus();
  }

  // Writes the next printed value or chunk of the outputs, or finishes; outside any budget.
  void WriteNext() {
    MemoryBudgetScope outside_the_budget(nullptr);
    if (next_printed_ < printed_.size()) {
      StartWrite(&printed_[next_printed_++]);
      return;
    }
    while (next_output_ < outputs_.size()) {
      const Tensor& t = outputs_[next_output_];
      const size_t total = static_cast<size_t>(t.nbytes());
      if (next_offset_ < total || (total == 0 && next_offset_ == 0 && !sent_header_)) {
        const size_t n = std::min(kChunkBytes, total - next_offset_);
        out_.Clear();
        out_.set_index(static_cast<uint32_t>(next_output_));
        if (next_offset_ == 0) {
          out_.set_dtype(ToProto(t.dtype()));
          for (int64_t d : t.shape()) out_.add_shape(d);
        }
        out_.set_offset(next_offset_);
        out_.set_data(static_cast<const char*>(t.raw_data()) + next_offset_, n);
        next_offset_ += n;
        sent_header_ = true;
        StartWrite(&out_);
        return;
      }
      ++next_output_;
      next_offset_ = 0;
      sent_header_ = false;
    }
    calls_.Record("ExecuteStream", absl::OkStatus(), tenant_->name);
    Finish(grpc::Status::OK);  // may delete this (OnDone): nothing after it
  }

  void Fail(const absl::Status& s) {
    MemoryBudgetScope outside_the_budget(nullptr);  // as WriteNext
    calls_.Record("ExecuteStream", s, tenant_ ? tenant_->name : "");
    Finish(ToGrpc(s));  // may delete this (OnDone): nothing after it
  }

  Calls& calls_;
  grpc::CallbackServerContext* ctx_;
  std::shared_ptr<const Tenant> tenant_;
  v1::ExecuteStreamRequest in_;
  v1::ExecuteRequest request_;
  bool has_request_ = false;
  int64_t expected_args_ = -1;  // the function's argument count; -1: not known yet
  std::vector<v1::Tensor> args_;
  std::vector<int64_t> declared_bytes_;  // per argument, from its dtype and shape
  int64_t total_declared_ = 0;
  std::vector<v1::TensorChunk> printed_;  // sent before the outputs
  size_t next_printed_ = 0;
  std::vector<Tensor> outputs_;
  size_t next_output_ = 0, next_offset_ = 0;
  bool sent_header_ = false;
  v1::TensorChunk out_;
};

}  // namespace

grpc::ServerBidiReactor<v1::ExecuteStreamRequest, v1::TensorChunk>* NewExecuteStream(
    Calls& calls, grpc::CallbackServerContext* ctx) {
  return new ExecuteStreamReactor(calls, ctx);
}

}  // namespace kiln::server
