// ExecuteStream: Execute for tensors larger than one message. The client sends the request, then
// each argument in chunks (the first chunk of a tensor carries its dtype and shape), and closes
// its side; the server runs the function on its pool and streams back what its Print ops showed
// (one message each), then the outputs in chunks.
#include "absl/strings/str_cat.h"
#include "proto/convert/tensor_convert.h"
#include "server/service.h"

namespace kiln::server {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

class ExecuteStreamReactor final
    : public grpc::ServerBidiReactor<v1::ExecuteStreamRequest, v1::TensorChunk> {
 public:
  ExecuteStreamReactor(KilnService& service, grpc::CallbackServerContext* ctx)
      : service_(service), ctx_(ctx) {
    service_.BeginCall();
    // Before any byte of the arguments: a caller without a valid token sends none.
    absl::StatusOr<std::shared_ptr<const Tenant>> tenant = service_.Authenticate(*ctx);
    if (!tenant.ok()) {
      Fail(tenant.status());
      return;
    }
    tenant_ = *std::move(tenant);
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client has sent everything
      service_.pool().Schedule([this] { Run(); });
      return;
    }
    if (absl::Status s = Take(in_); !s.ok()) return Fail(s);
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return Fail(absl::CancelledError("the client stopped reading"));
    WriteNext();
  }

  void OnDone() override {
    service_.EndCall();
    delete this;
  }

 private:
  // Accumulates one message: the request first, then chunks in order.
  absl::Status Take(const v1::ExecuteStreamRequest& msg) {
    if (msg.has_request()) {
      if (has_request_) return absl::InvalidArgumentError("ExecuteStream: a second request");
      request_ = msg.request();
      has_request_ = true;
      return absl::OkStatus();
    }
    if (!has_request_)
      return absl::InvalidArgumentError("ExecuteStream: a chunk before the request");
    const v1::TensorChunk& c = msg.chunk();
    if (c.index() > args_.size() || (c.index() == args_.size() && c.offset() != 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExecuteStream: chunk of argument ", c.index(), " out of order"));
    }
    if (c.index() == args_.size()) {
      args_.emplace_back();
      args_.back().set_dtype(c.dtype());
      *args_.back().mutable_shape() = c.shape();
    }
    v1::Tensor& t = args_[c.index()];
    if (c.offset() != t.data().size()) {
      return absl::InvalidArgumentError(absl::StrCat("ExecuteStream: argument ", c.index(),
                                                     " chunk at offset ", c.offset(), " after ",
                                                     t.data().size(), " bytes"));
    }
    if (static_cast<int64_t>(t.data().size() + c.data().size()) >
        service_.limits().max_tensor_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("argument ", c.index(), " exceeds this server's limit of ",
                       service_.limits().max_tensor_bytes, " bytes"));
    }
    t.mutable_data()->append(c.data());
    return absl::OkStatus();
  }

  void Run() {
    try {
      RunOrThrow();
    } catch (const std::bad_alloc& e) {
      Fail(absl::ResourceExhaustedError(absl::StrCat("ExecuteStream: ", e.what())));
    } catch (const std::exception& e) {
      Fail(absl::InternalError(absl::StrCat("ExecuteStream: ", e.what())));
    }
  }

  void RunOrThrow() {
    if (!has_request_) return Fail(absl::InvalidArgumentError("ExecuteStream: no request"));
    std::vector<Tensor> args;
    for (size_t i = 0; i < args_.size(); ++i) {
      absl::StatusOr<Tensor> t = FromProto(args_[i], service_.limits().max_tensor_bytes);
      if (!t.ok()) {
        return Fail(
            absl::InvalidArgumentError(absl::StrCat("argument ", i, ": ", t.status().message())));
      }
      args.push_back(*std::move(t));
    }
    args_.clear();
    PrintCapture printed(service_.limits().max_printed_bytes);
    absl::StatusOr<std::vector<Tensor>> out =
        service_.RunExecution(*tenant_, request_.function_id(), request_.session(),
                              std::move(args), CallInterrupt(ctx_), CallIdOf(*ctx_));
    if (!out.ok()) return Fail(out.status());
    for (const PrintedValue& p : printed.values()) {
      PrintedToProto(p, printed_.emplace_back().mutable_printed());
    }
    if (printed.dropped() > 0) printed_.emplace_back().set_printed_dropped(printed.dropped());
    for (Tensor& t : *out) outputs_.push_back(t.Contiguous());
    WriteNext();
  }

  // Writes the next printed value or chunk of the outputs, or finishes.
  void WriteNext() {
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
    service_.metrics().CountRequest("ExecuteStream", absl::StatusCode::kOk, tenant_->name);
    Finish(grpc::Status::OK);  // may delete this (OnDone): nothing after it
  }

  void Fail(const absl::Status& s) {
    service_.metrics().CountRequest("ExecuteStream", s.code(), tenant_ ? tenant_->name : "");
    Finish(ToGrpc(s));  // may delete this (OnDone): nothing after it
  }

  KilnService& service_;
  grpc::CallbackServerContext* ctx_;
  std::shared_ptr<const Tenant> tenant_;
  v1::ExecuteStreamRequest in_;
  v1::ExecuteRequest request_;
  bool has_request_ = false;
  std::vector<v1::Tensor> args_;
  std::vector<v1::TensorChunk> printed_;  // sent before the outputs
  size_t next_printed_ = 0;
  std::vector<Tensor> outputs_;
  size_t next_output_ = 0, next_offset_ = 0;
  bool sent_header_ = false;
  v1::TensorChunk out_;
};

}  // namespace

grpc::ServerBidiReactor<v1::ExecuteStreamRequest, v1::TensorChunk>* KilnService::ExecuteStream(
    Ctx* ctx) {
  return new ExecuteStreamReactor(*this, ctx);
}

}  // namespace kiln::server
