// Aesara's BroadcastTo (aesara.tensor.extra_ops) and Choose (aesara.tensor.basic):
// numpy.broadcast_to and numpy.choose, two ops that broadcast their operands to one shape.
#ifndef KILN_CORE_OPS_BROADCAST_TO_H_
#define KILN_CORE_OPS_BROADCAST_TO_H_

#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// BroadcastTo(a, s_0, ..., s_{n-1}): a broadcast to the shape (s_0, ..., s_{n-1}), integer
// scalars (constant ones become static dims). Kiln's output is a copy, not Aesara's read-only
// view, so that in-place rewrites never write through its repeated elements. The gradient sums
// the output's gradient over the broadcast dims (Aesara's); the shape's is undefined.
class BroadcastTo final : public DeclaredOp<BroadcastTo, NoAttrs> {
 public:
  KILN_DECLARED_OP("BroadcastTo")
};

// mode: what an index outside [0, n) does: "raise" (an error), "wrap" or "clip".
struct ChooseAttrs {
  std::string mode = "raise";
  static constexpr auto Fields() { return std::tuple{AttrField{"mode", &ChooseAttrs::mode}}; }
  absl::Status Check() const;
};

// Choose{mode}(a, choices): numpy.choose: out[i] = choices[a[i]][i], a (integer) and every
// choices[j] broadcast together; the output has choices' dtype. Aesara defines no gradient.
class Choose final : public DeclaredOp<Choose, ChooseAttrs> {
 public:
  KILN_DECLARED_OP("Choose")
};

// aesara.tensor.extra_ops.broadcast_to(x, shape): x itself when both are scalars.
Var broadcast_to(const Var& x, const std::vector<Var>& shape);
// aesara.tensor.choose(a, choices, mode), choices a tensor whose first dim indexes the choices.
Var choose(const Var& a, const Var& choices, const std::string& mode = "raise");

}  // namespace kiln

#endif  // KILN_CORE_OPS_BROADCAST_TO_H_
