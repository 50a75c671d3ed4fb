#include "core/compile/inner_program.h"

#include "core/graph/fgraph.h"
#include "core/tensor/status_macros.h"
#include "core/passes/passes.h"
#include "core/runtime/linked.h"

namespace kiln {

InnerProgram::InnerProgram() = default;
InnerProgram::~InnerProgram() = default;

absl::StatusOr<const LinkedProgram*> InnerProgram::Get(const InnerGraph& g, bool optimize) const {
  std::call_once(once_, [&] {
    status_ = [&]() -> absl::Status {
      ASSIGN_OR_RETURN(fgraph_, FunctionGraph::Make(g.inputs, g.outputs));
      if (optimize) {
        RewriteOptions options;
        options.trace = false;
        RETURN_IF_ERROR(kiln::optimize(*fgraph_, options).status());
      }
      program_ = LinkedProgram::Link(*fgraph_, {});
      return absl::OkStatus();
    }();
  });
  if (!status_.ok()) return status_;
  return program_.get();
}

}  // namespace kiln
