// Aesara's OpFromGraph (aesara.compile.builders): a graph used as one op. Its inner graph travels
// as an attribute (core/graph/inner_graph.h); the op runs it linked once, or, inline, the
// optimizer's first phase (inline_ofg_expansion) replaces the node by the graph itself. The
// gradient is the inner graph's, taken on the node's inputs.
#ifndef KILN_CORE_BUILDERS_OP_FROM_GRAPH_H_
#define KILN_CORE_BUILDERS_OP_FROM_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "core/graph/inner_graph.h"
#include "core/graph/op_decl.h"
#include "core/compile/inner_program.h"

namespace kiln {

// The props of OpFromGraph: the inner graph's text, whether it is inlined, a name, and the
// text of a gradient graph overriding the inner graph's own (Aesara's grad_overrides).
struct OpFromGraphAttrs {
  std::string inner;
  bool inline_ = false;
  std::string name;  // printed instead of "OpFromGraph" when set
  // Empty, or a graph from (inputs..., outputs..., output grads...) to one gradient per input.
  std::string grad;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"inner", &OpFromGraphAttrs::inner},
                      AttrField{"inline", &OpFromGraphAttrs::inline_},
                      AttrField{"name", &OpFromGraphAttrs::name},
                      AttrField{"grad", &OpFromGraphAttrs::grad}};
  }
};

// OpFromGraph(inputs...) -> the inner graph's outputs on them. Each input must have the type of
// its inner input (or a more precise one). Printed "OpFromGraph{inline=False}", or
// "<name>{inline=False}". With a gradient override, the gradient is an OpFromGraph of it
// named "<name>_grad" (as Aesara's) on the inputs, the outputs and the output gradients.
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
  KILN_OP_METHODS

 private:
  explicit OpFromGraph(OpFromGraphAttrs attrs) : attrs_(std::move(attrs)) {}
  OpFromGraphAttrs attrs_;
  InnerGraph inner_;
  // The gradient override's op, or null.
  std::shared_ptr<const OpFromGraph> grad_op_;
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
