// Aesara's OpFromGraph (aesara.compile.builders): a graph used as one op. Its inner graph travels
// as an attribute (core/graph/inner_graph.h); the op runs it linked once, or, inline, the
// optimizer's first phase (inline_ofg_expansion) replaces the node by the graph itself. The
// gradient is the inner graph's, taken on the node's inputs, or Aesara's overrides
// (grad_overrides, lop_overrides, rop_overrides, connection_pattern) as attributes.
#ifndef KILN_CORE_BUILDERS_OP_FROM_GRAPH_H_
#define KILN_CORE_BUILDERS_OP_FROM_GRAPH_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/compile/inner_program.h"
#include "core/graph/inner_graph.h"
#include "core/graph/op_decl.h"

namespace kiln {

// What an override says of one gradient (grad_kinds, per input) or R_op (rop_kinds, per
// output): the override graph's output in that place, DisconnectedType, or NullType.
enum OverrideKind : int { kFromGraph = 0, kDisconnected = 1, kNull = 2 };

// The props of OpFromGraph: the inner graph's text, whether it is inlined, a name, and Aesara's
// overrides of its gradient (grad_overrides / lop_overrides), of its R_op (rop_overrides) and
// of its connection pattern.
struct OpFromGraphAttrs {
  std::string inner;
  bool inline_ = false;
  std::string name;  // printed instead of "OpFromGraph" when set
  // Empty, or a graph from (inputs..., outputs..., output grads...) to one gradient per input.
  std::string grad;
  // Per input (or empty: all kFromGraph), what its gradient is; a kDisconnected or kNull entry
  // replaces the grad graph's output there (Aesara's DisconnectedType()/NullType() overrides).
  std::vector<int> grad_kinds;
  // The why_null of each kNull entry of grad_kinds, then of rop_kinds, one line each.
  std::string null_reasons;
  // The gradient override came as lop_overrides: its op is named "<name>_lop", not "_grad".
  bool lop = false;
  // Empty, or a graph from (inputs..., eval points...) to one R_op per output (rop_overrides).
  std::string rop;
  // Per output (or empty: all kFromGraph): kFromGraph or kNull (a NullType R_op).
  std::vector<int> rop_kinds;
  // Set on the gradient op of an OpFromGraph with an R_op override, whose `rop` that is: the
  // gradient of this op with respect to its output-gradient inputs is that R_op on (the
  // inputs, this op's output gradients), so that Rop, built by differentiating a gradient,
  // computes the override.
  bool rop_transposed = false;
  // Empty, or input-major (inputs x outputs) 0/1: Aesara's connection_pattern argument.
  std::vector<int> connections;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"inner", &OpFromGraphAttrs::inner},
                      AttrField{"inline", &OpFromGraphAttrs::inline_},
                      AttrField{"name", &OpFromGraphAttrs::name},
                      AttrField{"grad", &OpFromGraphAttrs::grad},
                      AttrField{"grad_kinds", &OpFromGraphAttrs::grad_kinds},
                      AttrField{"null_reasons", &OpFromGraphAttrs::null_reasons},
                      AttrField{"lop", &OpFromGraphAttrs::lop},
                      AttrField{"rop", &OpFromGraphAttrs::rop},
                      AttrField{"rop_kinds", &OpFromGraphAttrs::rop_kinds},
                      AttrField{"rop_transposed", &OpFromGraphAttrs::rop_transposed},
                      AttrField{"connections", &OpFromGraphAttrs::connections}};
  }
};

// OpFromGraph(inputs...) -> the inner graph's outputs on them. Each input must have the type of
// its inner input (or a more precise one). Printed "OpFromGraph{inline=False}", or
// "<name>{inline=False}". With a gradient override, the gradient is an OpFromGraph of it
// named "<name>_grad" ("<name>_lop" for lop_overrides, as Aesara's) on the inputs, the outputs
// and the output gradients; with an R_op override, the gradient (the override's or the inner
// graph's own, then as an op "<name>_lop") carries it, so Rop gives the override's values.
class OpFromGraph final : public OpOf<OpFromGraph>, public HasInnerGraph {
 public:
  static constexpr absl::string_view kTypeName = "OpFromGraph";

  // The op of `attrs`, its inner text decoded and checked.
  static absl::StatusOr<std::shared_ptr<const OpFromGraph>> Make(OpFromGraphAttrs attrs);
  // The registry's factory.
  static absl::StatusOr<OpPtr> FromAttrs(const OpAttrs& wire);

  const OpFromGraphAttrs& attrs() const { return attrs_; }
  bool is_inline() const { return attrs_.inline_; }
  const InnerGraph& inner() const override { return inner_; }
  // -1: Aesara prints no arrows from its inner inputs to the outer ones.
  int OuterInputOf(int) const override { return -1; }
  Use inner_use() const override { return Use::kCall; }
  std::string Name() const override;
  OpAttrs Attrs() const override { return EncodeAttrs(attrs_); }
  // connection_pattern when given; else Aesara's: input i is connected to output o when the
  // inner graph computes o from i or the gradient op reads o to compute i's gradient, but
  // not when i's gradient is overridden as DisconnectedType.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  KILN_OP_METHODS

 private:
  explicit OpFromGraph(OpFromGraphAttrs attrs) : attrs_(std::move(attrs)) {}
  // Checks the override attributes against the inner graph and makes their ops.
  absl::Status MakeOverrides();
  // The gradient rule's results with the kinds applied, from the gradient op's outputs.
  std::vector<Var> ApplyKinds(std::vector<Var> grads) const;
  OpFromGraphAttrs attrs_;
  InnerGraph inner_;
  // The gradient op (the override's, or the inner graph's own gradient when an R_op override
  // must travel with it), or null.
  std::shared_ptr<const OpFromGraph> grad_op_;
  std::vector<int> grad_kinds_;  // per input: attrs_.grad_kinds, or the own gradient's
  // reaches_[o][i]: inner output o depends on inner input i; computed at the first call
  // (one walk up from each output), as only gradients ask.
  const std::vector<std::vector<bool>>& Reaches() const;
  mutable std::once_flag reaches_once_;
  mutable std::vector<std::vector<bool>> reaches_;
  std::vector<std::string> grad_null_;  // per input: why_null of a kNull entry
  // rop_transposed: the R_op override's op, and the why_null of its kNull outputs.
  std::shared_ptr<const OpFromGraph> rop_op_;
  std::vector<std::string> rop_null_;
  InnerProgram program_;  // the graph, optimized and linked on the first call
};

// The node's outputs computed from its inputs by a copy of the inner graph (what inlining puts in
// the node's place).
absl::StatusOr<std::vector<VariablePtr>> InlineOpFromGraph(const Apply& node);

// OpFromGraph(inputs, outputs, inline, name): the op of the graph from `inputs` to `outputs`
// (every other leaf must be a constant).
absl::StatusOr<std::shared_ptr<const OpFromGraph>> op_from_graph(const std::vector<Var>& inputs,
                                                                 const std::vector<Var>& outputs,
                                                                 bool inline_ = false,
                                                                 std::string name = "");

// op_from_graph(inputs, outputs, inline_, name) whose gradient is `grads` (one per input), a
// graph of `inputs` and `output_grads` (one variable per output, of its type): Aesara's
// grad_overrides.
absl::StatusOr<std::shared_ptr<const OpFromGraph>> op_from_graph_with_grad(
    const std::vector<Var>& inputs, const std::vector<Var>& outputs,
    const std::vector<Var>& output_grads, const std::vector<Var>& grads, bool inline_ = false,
    std::string name = "");

}  // namespace kiln

#endif  // KILN_CORE_BUILDERS_OP_FROM_GRAPH_H_
