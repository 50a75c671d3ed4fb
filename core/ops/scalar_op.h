// The scalar ops that Elemwise maps over tensors (Aesara's aesara.scalar), and their dtype rules.
#ifndef KILN_CORE_OPS_SCALAR_OP_H_
#define KILN_CORE_OPS_SCALAR_OP_H_

#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/graph/dtype.h"

namespace kiln {

// How a scalar op's output dtype follows from its inputs' dtypes.
enum class DTypeRule {
  kUpcast,          // NumPy promotion of the inputs (add, mul)
  kUpcastNumeric,   // promotion; a bool result is an error (sub, neg)
  kUpcastBoolInt8,  // promotion, bool counted as int8 (pow)
  kTrueDiv,         // floatX when every input is bool or integer, else promotion
  kUpgradeToFloat,  // promotion, then integers and bool to float (exp, log)
};

// Every scalar op, listed once. X(enum, Aesara name, arity (-1: two or more), dtype rule).
#define KILN_SCALAR_OPS(X)                                \
  X(kAdd, "add", -1, DTypeRule::kUpcast)                  \
  X(kSub, "sub", 2, DTypeRule::kUpcastNumeric)            \
  X(kMul, "mul", -1, DTypeRule::kUpcast)                  \
  X(kTrueDiv, "true_div", 2, DTypeRule::kTrueDiv)         \
  X(kPow, "pow", 2, DTypeRule::kUpcastBoolInt8)           \
  X(kNeg, "neg", 1, DTypeRule::kUpcastNumeric)            \
  X(kExp, "exp", 1, DTypeRule::kUpgradeToFloat)           \
  X(kLog, "log", 1, DTypeRule::kUpgradeToFloat)

enum class ScalarOpKind {
#define KILN_SCALAR_OP_ENUM(e, name, arity, rule) e,
  KILN_SCALAR_OPS(KILN_SCALAR_OP_ENUM)
#undef KILN_SCALAR_OP_ENUM
};

// Aesara's name: "mul", "true_div".
std::string ScalarOpName(ScalarOpKind op);
// Number of inputs, or -1 for ops taking two or more (add, mul).
int ScalarOpArity(ScalarOpKind op);
// The output dtype for these input dtypes, or why the op does not accept them.
absl::StatusOr<DType> ScalarOutputDType(ScalarOpKind op, std::span<const DType> inputs);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SCALAR_OP_H_
