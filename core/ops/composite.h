// Composite: a scalar program of several scalar ops over typed scalar inputs, applied by one
// Elemwise (Aesara's Elemwise{Composite{...}}), the unit of elementwise fusion.
#ifndef KILN_CORE_OPS_COMPOSITE_H_
#define KILN_CORE_OPS_COMPOSITE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/var.h"
#include "core/ops/scalar_op.h"

namespace kiln {

struct FusedPlan;  // composite_kernel.h

// Registers 0..n_inputs-1 are the inputs, then one per constant, then one per instruction.
struct ScalarProgram {
  struct Instr {
    ScalarOp op;
    std::vector<int> args;  // registers
    DType dtype;            // of the result
  };
  std::vector<DType> input_dtypes;
  std::vector<Tensor> constants;  // 0-d
  std::vector<Instr> instrs;
  std::vector<int> outputs;  // registers
  // What the fused executor needs of this program, worked out once when it is made (FromGraph,
  // DecodeScalarProgram); not part of its identity.
  std::shared_ptr<const FusedPlan> plan;

  int num_inputs() const { return static_cast<int>(input_dtypes.size()); }
  DType RegisterDType(int r) const;
  // Aesara's inner-graph text: "(i0 + (i1 * 2.0)), exp(i0)".
  std::string ToString() const;
  // Structural equality (constants by bits).
  bool operator==(const ScalarProgram& other) const;

  // The program computing `outputs` from `inputs` through Elemwise nodes only (constants must
  // hold one element). Errors name the first node that is not an Elemwise.
  static absl::StatusOr<std::shared_ptr<const ScalarProgram>> FromGraph(
      const std::vector<Var>& inputs, const std::vector<Var>& outputs);
};

// Elemwise{Composite{...}} applied to tensors whose dtypes are the program's input dtypes; one
// Var per program output.
// A scalar program as text, "inputs|constants|instructions|outputs" (a constant "dtype:hexbytes",
// an instruction "op/cast_to/dtype/args"): how an Elemwise{Composite} travels on the wire.
std::string EncodeScalarProgram(const ScalarProgram& p);
// The program of EncodeScalarProgram's text, checked (every register in range), or
// INVALID_ARGUMENT saying what is wrong.
absl::StatusOr<std::shared_ptr<const ScalarProgram>> DecodeScalarProgram(const std::string& text);

std::vector<Var> apply_composite(std::shared_ptr<const ScalarProgram> program,
                                 const std::vector<Var>& inputs);

}  // namespace kiln

#endif  // KILN_CORE_OPS_COMPOSITE_H_
