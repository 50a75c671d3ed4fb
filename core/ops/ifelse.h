// Aesara's IfElse (aesara.ifelse.ifelse): one of two lists of values, chosen by a scalar
// condition, where only the chosen list is computed (the runtime skips the nodes only the other
// list needs; core/runtime/linked.h).
#ifndef KILN_CORE_OPS_IFELSE_H_
#define KILN_CORE_OPS_IFELSE_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// The props of IfElse: how many values each branch gives.
struct IfElseAttrs {
  int n_outs = 1;
  static constexpr auto Fields() { return std::tuple{AttrField{"n_outs", &IfElseAttrs::n_outs}}; }
  // At least 1 and at most 4096 values.
  absl::Status Check() const;
};

// IfElse{n_outs}(cond, then_0..then_n-1, else_0..else_n-1): then_i where the scalar cond is
// nonzero, else_i otherwise (a view of it). then_i and else_i have one dtype and rank; the
// output's static dims are those they share. Printed "if{}", as Aesara prints it. vectorize
// (core/grad/vectorize.h) batches it as an IfElse of batched values, or by switch when the
// condition itself differs between rows.
class IfElse final : public DeclaredOp<IfElse, IfElseAttrs> {
 public:
  KILN_DECLARED_OP("IfElse")
  int n_outs() const { return attrs().n_outs; }
  int lazy_then_inputs() const override { return n_outs(); }
  std::string Name() const override { return "if{}"; }
  std::vector<std::pair<int, int>> view_map() const override;
};

// Aesara's ifelse(cond, then_branch, else_branch): the values of one branch, lazily.
std::vector<Var> ifelse(const Var& cond, const std::vector<Var>& then_branch,
                        const std::vector<Var>& else_branch);
Var ifelse(const Var& cond, const Var& then_value, const Var& else_value);

}  // namespace kiln

#endif  // KILN_CORE_OPS_IFELSE_H_
