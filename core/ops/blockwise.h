// PyTensor's Blockwise (pytensor.tensor.blockwise): a core op with a gufunc signature applied over
// the broadcast leading (batch) dims of its inputs, as numpy.vectorize with a signature. Its props
// are the core op (class name and attributes) and the signature; it prints as PyTensor's
// "Blockwise{MatrixInverse, (m,m)->(m,m)}".
#ifndef KILN_CORE_OPS_BLOCKWISE_H_
#define KILN_CORE_OPS_BLOCKWISE_H_

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"
#include "core/ops/blockwise_signature.h"

namespace kiln {

// The props of Blockwise: the core op as its class name and its OpAttrs::Text(), and the
// signature's text.
struct BlockwiseAttrs {
  std::string core;        // the core op's class name ("MatrixInverse")
  std::string core_attrs;  // its attributes as OpAttrs::Text() ("UPLO=s1:L;")
  std::string signature;   // "(m,m)->(m,m)"
  static constexpr auto Fields() {
    return std::tuple{AttrField{"core", &BlockwiseAttrs::core},
                      AttrField{"core_attrs", &BlockwiseAttrs::core_attrs},
                      AttrField{"signature", &BlockwiseAttrs::signature}};
  }
};

// Blockwise(core_op, signature)(inputs...): input i has the core dims its signature argument
// names last, after any number of batch dims; the batch dims of all inputs broadcast (NumPy's
// rules, aligned on the right) and lead every output.
class Blockwise final : public OpOf<Blockwise> {
 public:
  static constexpr absl::string_view kTypeName = "Blockwise";

  // The Blockwise of `core` with `signature`, or INVALID_ARGUMENT for a malformed signature or a
  // core op that cannot be batched (a Blockwise).
  static absl::StatusOr<std::shared_ptr<const Blockwise>> Make(OpPtr core,
                                                               absl::string_view signature);
  // The registry's factory: the core op made from its class name and attributes.
  static absl::StatusOr<OpPtr> FromAttrs(const OpAttrs& wire);

  const BlockwiseAttrs& attrs() const { return attrs_; }
  // The op applied to each batch item.
  const OpPtr& core_op() const { return core_; }
  const GufuncSignature& signature() const { return signature_; }
  // "Blockwise{<core op's name>, <signature>}".
  std::string Name() const override;
  OpAttrs Attrs() const override { return EncodeAttrs(attrs_); }
  KILN_OP_METHODS

  // How many batch dims `node` (a node of this op) has.
  int BatchNdim(const Apply& node) const;
  // The core op's node on fresh inputs of the core types of `node`'s inputs (their last dims).
  absl::StatusOr<ApplyPtr> CoreNode(const std::vector<VariablePtr>& inputs) const;

 private:
  Blockwise(BlockwiseAttrs attrs, OpPtr core, GufuncSignature signature)
      : attrs_(std::move(attrs)), core_(std::move(core)), signature_(std::move(signature)) {}
  BlockwiseAttrs attrs_;
  OpPtr core_;
  GufuncSignature signature_;
};

// Blockwise(core_op, signature) applied to `inputs` (output 0; the node's other outputs are
// its siblings).
Var blockwise(const OpPtr& core_op, absl::string_view signature, std::vector<Var> inputs);
// Every output of Blockwise(core_op, signature) on `inputs`.
absl::StatusOr<std::vector<VariablePtr>> blockwise_outputs(const OpPtr& core_op,
                                                           absl::string_view signature,
                                                           std::vector<Var> inputs);

// `outputs` recomputed with each pair's first variable (a core variable of rank r) replaced by
// the second (rank >= r: leading batch dims): elementwise ops broadcast the batch dims, a
// Blockwise gains them, and every other op on a batched input becomes a Blockwise of itself
// (a signature of distinct dim names of its inputs' and outputs' ranks). Nodes are visited in
// topological order without recursion. PyTensor's vectorize_graph.
absl::StatusOr<std::vector<VariablePtr>> VectorizeGraph(
    const std::vector<VariablePtr>& outputs,
    const std::vector<std::pair<VariablePtr, VariablePtr>>& replace);

}  // namespace kiln

#endif  // KILN_CORE_OPS_BLOCKWISE_H_
