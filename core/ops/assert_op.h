// Aesara's Assert (aesara.raise_op): its first input unchanged when every condition is true, an
// error with its message otherwise.
#ifndef KILN_CORE_OPS_ASSERT_OP_H_
#define KILN_CORE_OPS_ASSERT_OP_H_

#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// msg: the error's text when a condition is false (Aesara's default message by default).
struct AssertAttrs {
  std::string msg = "Aesara Assert failed!";
  static constexpr auto Fields() { return std::tuple{AttrField{"msg", &AssertAttrs::msg}}; }
  absl::Status Check() const;
};

// Assert{msg}(x, *conds): x (a view of it) when every scalar condition is nonzero; otherwise an
// INVALID_ARGUMENT error "Assert{msg=...}: <msg>" (Aesara raises AssertionError(msg)). Prints
// "Assert{msg=<msg>}" as Aesara does.
class Assert final : public DeclaredOp<Assert, AssertAttrs> {
 public:
  KILN_DECLARED_OP("Assert")
  std::string Name() const override;
  // Only x carries a gradient; the conditions are disconnected.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
};

// Assert(msg)(x, conds...).
Var assert_op(const Var& x, const std::vector<Var>& conds,
              const std::string& msg = "Aesara Assert failed!");

}  // namespace kiln

#endif  // KILN_CORE_OPS_ASSERT_OP_H_
