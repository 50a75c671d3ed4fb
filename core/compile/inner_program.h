// An op's inner graph (Scan's body, OpFromGraph's graph) linked once, on the op's first call,
// and shared by every call after it.
#ifndef KILN_CORE_COMPILE_INNER_PROGRAM_H_
#define KILN_CORE_COMPILE_INNER_PROGRAM_H_

#include <memory>
#include <mutex>

#include "absl/status/statusor.h"
#include "core/graph/inner_graph.h"

namespace kiln {

class FunctionGraph;
class LinkedProgram;

// The linked program of one inner graph, made on the first Get.
class InnerProgram {
 public:
  InnerProgram();
  ~InnerProgram();
  // The program of g (optimized first in FAST_RUN when `optimize`), or the error making it met;
  // every call passes the same g, which must outlive this.
  absl::StatusOr<const LinkedProgram*> Get(const InnerGraph& g, bool optimize) const;

 private:
  mutable std::once_flag once_;
  mutable std::unique_ptr<FunctionGraph> fgraph_;
  mutable std::shared_ptr<const LinkedProgram> program_;
  mutable absl::Status status_;
};

}  // namespace kiln

#endif  // KILN_CORE_COMPILE_INNER_PROGRAM_H_
