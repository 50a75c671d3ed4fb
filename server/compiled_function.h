// A compiled function as the server keeps it: a compile job (compile_job.h) optimized and
// linked; its signature says which inputs are bound to a session's shared variables and which of
// them its updates replace.
#ifndef KILN_SERVER_COMPILED_FUNCTION_H_
#define KILN_SERVER_COMPILED_FUNCTION_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/compile/function.h"
#include "kiln/v1/service.pb.h"
#include "proto/convert/graph_convert.h"
#include "server/compile_job.h"
#include "server/sessions.h"

namespace kiln::server {

// How this server came to hold a function (what the console shows of it).
struct FunctionFacts {
  double created_unix = 0;     // when this server compiled or loaded it
  double compile_seconds = 0;  // optimizing and linking it here; 0 when loaded
  int nodes_before = -1;       // the graph as built; -1 when loaded (not known)
  std::string source = "compiled";  // or the tier it was loaded from ("disk", "redis")
  std::vector<std::pair<std::string, int>> rewrites;  // the rules that fired, and how often
};

// The wall-clock time (unix seconds) of a function's last call; 0 before the first.
class LastUse {
 public:
  LastUse() = default;
  LastUse(const LastUse& other) : unix_(other.get()) {}
  double get() const { return unix_.load(std::memory_order_relaxed); }
  void Touch();

 private:
  std::atomic<double> unix_{0};
};

struct CompiledFunction {
  std::string id, canonical_form;
  v1::FunctionSignature signature;
  Function function;       // every graph input in order; outputs, then the updates' new values
  std::string stored;      // its kiln.v1.StoredFunction: what the disk tier and Redis keep
  FunctionFacts facts;
  mutable LastUse last_use;  // set by Execute
  ProtoGraph built;          // the graph as the client built it; empty when loaded from a tier
  int64_t bytes() const;   // what the function holds in memory, for the cache's byte budget
};

// Optimizes and links the job.
absl::StatusOr<std::shared_ptr<const CompiledFunction>> Compile(const CompileJob& job);

// The function from its stored bytes (CompiledFunction::stored), without optimizing again;
// DATA_LOSS when they are not a stored function of this server's format or do not load.
// `source` names the tier the bytes came from (FunctionFacts::source).
absl::StatusOr<std::shared_ptr<const CompiledFunction>> DecodeCompiled(
    std::string_view bytes, const char* source = "stored");

// Runs f on the explicit arguments, binding shared inputs from `session` (may be null when f
// has none) and applying f's updates there atomically: computed again when another replica
// updated the session meanwhile. `interrupt` is polled between nodes.
// With a call id, the updates are recorded with the outputs, and a retry of the call (`retry`)
// whose first attempt wrote them gets those outputs instead of updating twice.
struct CallId {
  std::string id;      // empty: none
  bool retry = false;  // an attempt after the first
};
absl::StatusOr<std::vector<Tensor>> Execute(const CompiledFunction& f, std::vector<Tensor> args,
                                            Session* session,
                                            const std::function<absl::Status()>& interrupt,
                                            const CallId& call = {});

}  // namespace kiln::server

#endif  // KILN_SERVER_COMPILED_FUNCTION_H_
