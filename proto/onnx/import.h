// ONNX models -> Kiln graphs: kiln::onnx::Import turns a ModelProto (opset 7 to 17 of the
// default domain; older opsets are brought up by ONNX's version converter) into Kiln variables
// that keep the model's input, output and initializer names, for function(), grad() and the
// wire (proto/onnx/README.md).
#ifndef KILN_PROTO_ONNX_IMPORT_H_
#define KILN_PROTO_ONNX_IMPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"

namespace kiln::onnx {

struct ImportOptions {
  // Floating-point initializers become inputs (weights) instead of constants, so that a
  // function can take them as shared variables and train them; the rest stay constants.
  bool trainable = false;
  // Limits (the server's own): the model's bytes, its node count, its initializers' bytes
  // (together).
  int64_t max_model_bytes = int64_t{1} << 30;
  int64_t max_nodes = 1000000;
  int64_t max_tensor_bytes = int64_t{1} << 30;
};

// A model as Kiln variables.
struct ImportedModel {
  std::vector<Var> inputs;  // the graph inputs that are not initializers, in order
  std::vector<std::string> input_names;
  std::vector<Var> outputs;
  std::vector<std::string> output_names;
  // With ImportOptions::trainable: the floating-point initializers as inputs, and their values.
  std::vector<Var> weights;
  std::vector<std::string> weight_names;
  std::vector<Tensor> weight_values;
  int64_t opset = 0;  // the default domain's opset the model was written for
};

// The model serialized in `model_bytes` as Kiln variables. A malformed model is INVALID_ARGUMENT
// naming the node; an operator (or attribute, or type) Kiln does not take is UNIMPLEMENTED
// naming it and the opset; limits past are RESOURCE_EXHAUSTED.
absl::StatusOr<ImportedModel> Import(absl::string_view model_bytes,
                                     const ImportOptions& options = {});

// The ONNX operators of the default domain the importer takes, sorted.
std::vector<std::string> SupportedOperators();

}  // namespace kiln::onnx

#endif  // KILN_PROTO_ONNX_IMPORT_H_
