// Kiln graphs -> ONNX models: kiln::onnx::Export writes the graph between `inputs` and `outputs`
// as a ModelProto of the default domain (opset 13 to 17), for ops with ONNX equivalents; an op
// without one is UNIMPLEMENTED naming it (proto/onnx/README.md lists what is taken).
#ifndef KILN_PROTO_ONNX_EXPORT_H_
#define KILN_PROTO_ONNX_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/var.h"

namespace kiln::onnx {

struct ExportOptions {
  int64_t opset = 17;
  std::string graph_name = "kiln";
};

// The serialized ModelProto. Inputs keep their variables' names (input<i> when unnamed), outputs
// take `output_names` (output<i> when empty), constants become initializers; dims Kiln knows are
// dim_values, the rest named dims.
absl::StatusOr<std::string> Export(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                                   const std::vector<std::string>& output_names = {},
                                   const ExportOptions& options = {});

}  // namespace kiln::onnx

#endif  // KILN_PROTO_ONNX_EXPORT_H_
