// function(inputs, outputs): a callable graph. The graph is optimized (FAST_RUN unless the mode
// says otherwise) and then run node by node, fused Elemwise{Composite} nodes in blocks.
#ifndef KILN_CORE_RUNTIME_FUNCTION_H_
#define KILN_CORE_RUNTIME_FUNCTION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/fgraph.h"
#include "core/graph/var.h"
#include "core/runtime/tensor.h"

namespace kiln {

// How function() compiles: the optimizer's mode (FAST_RUN, FAST_COMPILE or NONE).
struct FunctionOptions {
  std::string mode = "FAST_RUN";
};

class Function {
 public:
  // Clones the graph between inputs and outputs into a FunctionGraph and schedules it.
  static absl::StatusOr<Function> Make(const std::vector<Var>& inputs,
                                       const std::vector<Var>& outputs,
                                       const FunctionOptions& options = {});

  // Runs the graph on one value per input. A value whose dtype differs is upcast when that is
  // lossless (int64 into float64) and rejected otherwise, as Aesara's TensorType.filter does;
  // its rank and any static dims must match the input's type. The results never share memory
  // with the arguments, the graph's constants or each other.
  absl::StatusOr<std::vector<Tensor>> operator()(std::vector<Tensor> args) const;

  const FunctionGraph& fgraph() const { return *fgraph_; }

 private:
  std::shared_ptr<const FunctionGraph> fgraph_;
  std::vector<Apply*> schedule_;
  std::vector<Tensor> constants_;  // the graph's constant values, never handed out to write to
};

// Aesara's function(inputs, outputs).
inline absl::StatusOr<Function> function(const std::vector<Var>& inputs,
                                         const std::vector<Var>& outputs,
                                         const FunctionOptions& options = {}) {
  return Function::Make(inputs, outputs, options);
}

}  // namespace kiln

#endif  // KILN_CORE_RUNTIME_FUNCTION_H_
