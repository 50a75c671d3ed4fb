#include "server/compile_job.h"

#include <set>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "openssl/evp.h"
#include "core/graph/canonical.h"
#include "core/rewrite/mode.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/options_convert.h"
#include "proto/convert/tensor_convert.h"
#include "proto/version.h"

namespace kiln::server {
namespace {

// A stream that SHA-256s what is written to it through one small buffer: a request's hash
// without its serialized copy (a 2 MB constant would otherwise be copied into fresh memory).
class Sha256Stream : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  Sha256Stream() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~Sha256Stream() override { EVP_MD_CTX_free(ctx_); }

  bool Next(void** data, int* size) override {
    Flush();
    *data = buffer_;
    *size = pending_ = sizeof(buffer_);
    return true;
  }
  void BackUp(int count) override { pending_ -= count; }
  int64_t ByteCount() const override { return hashed_ + pending_; }

  void Write(std::string_view bytes) {
    Flush();
    EVP_DigestUpdate(ctx_, bytes.data(), bytes.size());
    hashed_ += static_cast<int64_t>(bytes.size());
  }
  // The hex digest of all that was written.
  std::string HexDigest() {
    Flush();
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(ctx_, digest, &size);
    return absl::BytesToHexString(
        absl::string_view(reinterpret_cast<const char*>(digest), size));
  }

 private:
  void Flush() {
    EVP_DigestUpdate(ctx_, buffer_, static_cast<size_t>(pending_));
    hashed_ += pending_;
    pending_ = 0;
  }

  EVP_MD_CTX* ctx_;
  char buffer_[1 << 16];
  int pending_ = 0;  // bytes of buffer_ written and not yet hashed
  int64_t hashed_ = 0;
};

// Decode: the request's options; an unknown value is INVALID_ARGUMENT naming its field.
absl::Status DecodeOptions(const v1::CompileRequest& request, CompileJob& job) {
  ASSIGN_OR_RETURN(job.mode, FromProto(request.mode()));
  ASSIGN_OR_RETURN(job.on_unused_input, OnUnusedInputFromProto(request.on_unused_input()));
  ASSIGN_OR_RETURN(job.check, CheckFromProto(request.check()));
  job.profile = request.profile();
  return absl::OkStatus();
}

// Validate: what the message must be before a graph is built from it: no more nodes than the
// server's limit, each shared variable bound once, each update of a shared input and once.
absl::Status Validate(const v1::CompileRequest& request, const GraphLimits& limits) {
  const v1::Graph& g = request.graph();
  if (g.nodes_size() > limits.max_nodes) {
    return absl::ResourceExhaustedError(absl::StrCat("the graph has ", g.nodes_size(),
                                                     " nodes, more than this server's limit of ",
                                                     limits.max_nodes));
  }
  std::set<std::string> shared_names;
  for (int i = 0; i < g.inputs_size(); ++i) {
    const std::string& name = g.inputs(i).shared();
    if (!name.empty() && !shared_names.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, ": shared variable '", name, "' is bound twice"));
    }
  }
  std::set<uint32_t> updated;
  for (int u = 0; u < request.updates_size(); ++u) {
    const uint32_t input = request.updates(u).input();
    if (input >= static_cast<uint32_t>(g.inputs_size()) || g.inputs(input).shared().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("update ", u, ": input ", input, " is not a shared input of the graph"));
    }
    if (!updated.insert(input).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("update ", u, ": input ", input, " is updated twice"));
    }
  }
  return absl::OkStatus();
}

// Build: the core graph, with the updates' new values as outputs after the graph's own (the
// converter checks every node and reference as it builds them), each new value typed as the
// shared variable it replaces.
absl::StatusOr<ProtoGraph> BuildGraph(const v1::CompileRequest& request,
                                      const GraphLimits& limits) {
  const v1::Graph& g = request.graph();
  std::vector<const v1::ValueRef*> new_values;
  for (const v1::Update& update : request.updates()) new_values.push_back(&update.value());
  ASSIGN_OR_RETURN(ProtoGraph graph, GraphFromProto(g, limits, new_values));
  for (int u = 0; u < request.updates_size(); ++u) {
    const Var& target = graph.inputs[request.updates(u).input()];
    const Var& value = graph.outputs[g.outputs_size() + u];
    if (value.dtype() != target.dtype() || value.ndim() != target.ndim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "update ", u, ": the new value of shared variable '",
          g.inputs(request.updates(u).input()).shared(), "' has type ", value.type().ToString(),
          " but the variable has type ", target.type().ToString()));
    }
  }
  return graph;
}

// What a function's id depends on besides its graph: the compiler's version, the options, the
// shared inputs and the updates, then the tenant of a scoped function. An unscoped salt ends at
// `|profile=`, as it always did, so that the ids every client shares never change with scopes.
std::string Salt(const v1::CompileRequest& request, const CompileJob& job,
                 const TenantScope& scope) {
  const v1::Graph& g = request.graph();
  std::vector<std::string> shared, updates;
  for (int i = 0; i < g.inputs_size(); ++i) {
    if (!g.inputs(i).shared().empty()) shared.push_back(absl::StrCat(i, ":", g.inputs(i).shared()));
  }
  for (const v1::Update& update : request.updates())
    updates.push_back(absl::StrCat(update.input()));
  std::string salt = absl::StrCat(
      CompilerVersion(), "|mode=", OptimizerModeName(job.mode), "|outputs=", g.outputs_size(),
      "|unused=", job.on_unused_input == OnUnusedInput::kRaise ? "raise" : "other",
      "|shared=", absl::StrJoin(shared, ","), "|updates=", absl::StrJoin(updates, ","),
      "|check=", static_cast<int>(job.check), "|profile=", job.profile);
  if (scope.has_value()) absl::StrAppend(&salt, "|tenant=", *scope);
  return salt;
}

// Identify: the canonical form, the salt after it, and their hash, the function id.
absl::Status Identify(const v1::CompileRequest& request, const TenantScope& scope,
                      CompileJob& job) {
  const std::string salt = Salt(request, job, scope);
  ASSIGN_OR_RETURN(CanonicalGraph canonical,
                   Canonicalize(job.graph.inputs, job.graph.outputs, salt));
  job.id = std::move(canonical.id);
  job.canonical_form = absl::StrCat(canonical.form, "\n", salt);
  return absl::OkStatus();
}

// The signature clients call the function by: inputs (shared ones named), outputs, updates.
v1::FunctionSignature SignatureOf(const v1::CompileRequest& request, const CompileJob& job) {
  const v1::Graph& g = request.graph();
  v1::FunctionSignature sig;
  for (int i = 0; i < g.inputs_size(); ++i) {
    v1::Input* in = sig.add_inputs();
    in->set_name(g.inputs(i).name());
    in->set_shared(g.inputs(i).shared());
    *in->mutable_type() = ToProto(*job.graph.inputs[i]->tensor_type());
  }
  for (int o = 0; o < g.outputs_size(); ++o) {
    *sig.add_output_types() = ToProto(*job.graph.outputs[o]->tensor_type());
  }
  for (const v1::Update& update : request.updates()) sig.add_update_inputs(update.input());
  sig.set_mode(ToProto(job.mode));
  sig.set_check(ToProto(job.check));
  sig.set_profile(job.profile);
  return sig;
}

}  // namespace

absl::StatusOr<CompileJob> PrepareCompile(const v1::CompileRequest& request,
                                          const GraphLimits& limits, const TenantScope& scope) {
  CompileJob job;
  RETURN_IF_ERROR(DecodeOptions(request, job));
  RETURN_IF_ERROR(Validate(request, limits));
  ASSIGN_OR_RETURN(job.graph, BuildGraph(request, limits));
  RETURN_IF_ERROR(Identify(request, scope, job));
  job.signature = SignatureOf(request, job);
  return job;
}

bool ScopedTo(const std::string& canonical_form, const std::string& tenant) {
  // A tenant's name holds no '|' or '=': the salt's last field names one tenant only.
  return absl::EndsWith(canonical_form, absl::StrCat("|tenant=", tenant));
}

std::string RequestKey(const v1::CompileRequest& request, const TenantScope& scope) {
  auto stream = std::make_unique<Sha256Stream>();  // its 64 KB buffer off the stack
  if (scope.has_value()) stream->Write(absl::StrCat("tenant ", *scope, "\n"));
  request.SerializeToZeroCopyStream(stream.get());
  return stream->HexDigest();
}

}  // namespace kiln::server
