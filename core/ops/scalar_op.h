// The scalar ops that Elemwise maps over tensors (Aesara's aesara.scalar), their names and dtype
// rules.
#ifndef KILN_CORE_OPS_SCALAR_OP_H_
#define KILN_CORE_OPS_SCALAR_OP_H_

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "core/graph/dtype.h"

namespace kiln {

// How a scalar op's output dtype follows from its inputs' dtypes (Aesara's output-type rules).
enum class DTypeRule {
  kUpcast,          // NumPy promotion (add, mul, maximum)
  kUpcastNoBool,    // promotion; a bool result is an error (sub)
  kUpcastMin8,      // promotion, a bool result becomes int8 (pow)
  kTrueDiv,         // floatX when every input is discrete, else promotion
  kUpgradeToFloat,  // each input to a float first (int8 -> float32, int32 -> float64)
  kSame,            // the input's dtype (sqr, identity)
  kSameNoBool,      // the input's dtype; bool is an error (neg, sgn)
  kSameFloatOnly,   // the input's dtype, which must be a float (rounding)
  kBool,            // bool (comparisons, isnan, isinf)
  kBitwise,         // all bool -> bool, else promotion of integers (and, or, xor, invert)
  kBranches,        // promotion of inputs 1 and 2 (switch)
  kSecondInput,     // input 1's dtype (second)
  kRealPart,        // complex -> its float component, others unchanged (abs, real, imag)
  kFloat64,         // always float64 (angle)
  kSameMin8,        // the input's dtype, bool -> int8 (conj)
  kCast,            // the op's target dtype
  kProgram,         // a Composite's inner program decides
};

// Every scalar op, listed once. X(enum, Aesara scalar name, arity (-1: two or more), dtype rule,
// complex inputs allowed).
#define KILN_SCALAR_OPS(X)                                                                    \
  X(kLt, "lt", 2, DTypeRule::kBool, false)                                                    \
  X(kGt, "gt", 2, DTypeRule::kBool, false)                                                    \
  X(kLe, "le", 2, DTypeRule::kBool, false)                                                    \
  X(kGe, "ge", 2, DTypeRule::kBool, false)                                                    \
  X(kEq, "eq", 2, DTypeRule::kBool, true)                                                     \
  X(kNeq, "neq", 2, DTypeRule::kBool, true)                                                   \
  X(kAnd, "and_", 2, DTypeRule::kBitwise, false)                                              \
  X(kOr, "or_", 2, DTypeRule::kBitwise, false)                                                \
  X(kXor, "xor", 2, DTypeRule::kBitwise, false)                                               \
  X(kInvert, "invert", 1, DTypeRule::kBitwise, false)                                         \
  X(kIsNan, "isnan", 1, DTypeRule::kBool, true)                                               \
  X(kIsInf, "isinf", 1, DTypeRule::kBool, true)                                               \
  X(kSwitch, "switch", 3, DTypeRule::kBranches, true)                                         \
  X(kMaximum, "maximum", 2, DTypeRule::kUpcast, false)                                        \
  X(kMinimum, "minimum", 2, DTypeRule::kUpcast, false)                                        \
  X(kAdd, "add", -1, DTypeRule::kUpcast, true)                                                \
  X(kSub, "sub", 2, DTypeRule::kUpcastNoBool, true)                                           \
  X(kMul, "mul", -1, DTypeRule::kUpcast, true)                                                \
  X(kTrueDiv, "true_div", 2, DTypeRule::kTrueDiv, true)                                       \
  X(kIntDiv, "int_div", 2, DTypeRule::kUpcast, false)                                         \
  X(kMod, "mod", 2, DTypeRule::kUpcast, false)                                                \
  X(kPow, "pow", 2, DTypeRule::kUpcastMin8, true)                                             \
  X(kClip, "clip", 3, DTypeRule::kUpcast, false)                                              \
  X(kAbs, "abs", 1, DTypeRule::kRealPart, true)                                               \
  X(kSgn, "sgn", 1, DTypeRule::kSameNoBool, false)                                            \
  X(kCeil, "ceil", 1, DTypeRule::kUpgradeToFloat, false)                                      \
  X(kFloor, "floor", 1, DTypeRule::kUpgradeToFloat, false)                                    \
  X(kTrunc, "trunc", 1, DTypeRule::kUpgradeToFloat, false)                                    \
  X(kRoundHalfToEven, "round_half_to_even", 1, DTypeRule::kSameFloatOnly, false)              \
  X(kRoundHalfAwayFromZero, "round_half_away_from_zero", 1, DTypeRule::kSameFloatOnly, false) \
  X(kNeg, "neg", 1, DTypeRule::kSameNoBool, true)                                             \
  X(kReciprocal, "reciprocal", 1, DTypeRule::kUpgradeToFloat, true)                           \
  X(kLog, "log", 1, DTypeRule::kUpgradeToFloat, true)                                         \
  X(kLog2, "log2", 1, DTypeRule::kUpgradeToFloat, false)                                      \
  X(kLog10, "log10", 1, DTypeRule::kUpgradeToFloat, false)                                    \
  X(kLog1p, "log1p", 1, DTypeRule::kUpgradeToFloat, false)                                    \
  X(kExp, "exp", 1, DTypeRule::kUpgradeToFloat, true)                                         \
  X(kExp2, "exp2", 1, DTypeRule::kUpgradeToFloat, false)                                      \
  X(kExpm1, "expm1", 1, DTypeRule::kUpgradeToFloat, false)                                    \
  X(kSqr, "sqr", 1, DTypeRule::kSame, true)                                                   \
  X(kSqrt, "sqrt", 1, DTypeRule::kUpgradeToFloat, true)                                       \
  X(kDeg2Rad, "deg2rad", 1, DTypeRule::kUpgradeToFloat, false)                                \
  X(kRad2Deg, "rad2deg", 1, DTypeRule::kUpgradeToFloat, false)                                \
  X(kCos, "cos", 1, DTypeRule::kUpgradeToFloat, false)                                        \
  X(kArccos, "arccos", 1, DTypeRule::kUpgradeToFloat, false)                                  \
  X(kSin, "sin", 1, DTypeRule::kUpgradeToFloat, false)                                        \
  X(kArcsin, "arcsin", 1, DTypeRule::kUpgradeToFloat, false)                                  \
  X(kTan, "tan", 1, DTypeRule::kUpgradeToFloat, false)                                        \
  X(kArctan, "arctan", 1, DTypeRule::kUpgradeToFloat, false)                                  \
  X(kArctan2, "arctan2", 2, DTypeRule::kUpgradeToFloat, false)                                \
  X(kCosh, "cosh", 1, DTypeRule::kUpgradeToFloat, false)                                      \
  X(kArccosh, "arccosh", 1, DTypeRule::kUpgradeToFloat, false)                                \
  X(kSinh, "sinh", 1, DTypeRule::kUpgradeToFloat, false)                                      \
  X(kArcsinh, "arcsinh", 1, DTypeRule::kUpgradeToFloat, false)                                \
  X(kTanh, "tanh", 1, DTypeRule::kUpgradeToFloat, false)                                      \
  X(kArctanh, "arctanh", 1, DTypeRule::kUpgradeToFloat, false)                                \
  X(kErf, "erf", 1, DTypeRule::kUpgradeToFloat, false)                                        \
  X(kErfc, "erfc", 1, DTypeRule::kUpgradeToFloat, false)                                      \
  X(kErfcx, "erfcx", 1, DTypeRule::kUpgradeToFloat, false)                                    \
  X(kErfinv, "erfinv", 1, DTypeRule::kUpgradeToFloat, false)                                  \
  X(kErfcinv, "erfcinv", 1, DTypeRule::kUpgradeToFloat, false)                                \
  X(kGamma, "gamma", 1, DTypeRule::kUpgradeToFloat, false)                                    \
  X(kGammaln, "gammaln", 1, DTypeRule::kUpgradeToFloat, false)                                \
  X(kPsi, "psi", 1, DTypeRule::kUpgradeToFloat, false)                                        \
  X(kSigmoid, "sigmoid", 1, DTypeRule::kUpgradeToFloat, false)                                \
  X(kSoftplus, "softplus", 1, DTypeRule::kUpgradeToFloat, false)                              \
  X(kLog1mexp, "log1mexp", 1, DTypeRule::kUpgradeToFloat, false)                              \
  X(kJ0, "j0", 1, DTypeRule::kUpgradeToFloat, false)                                          \
  X(kJ1, "j1", 1, DTypeRule::kUpgradeToFloat, false)                                          \
  X(kIdentity, "identity", 1, DTypeRule::kSame, true)                                         \
  X(kSecond, "second", 2, DTypeRule::kSecondInput, true)                                      \
  X(kCast, "cast", 1, DTypeRule::kCast, true)                                                 \
  X(kReal, "real", 1, DTypeRule::kRealPart, true)                                             \
  X(kImag, "imag", 1, DTypeRule::kRealPart, true)                                             \
  X(kConj, "conj", 1, DTypeRule::kSameMin8, true)                                             \
  X(kAngle, "angle", 1, DTypeRule::kFloat64, true)                                            \
  X(kComposite, "composite", -2, DTypeRule::kProgram, true)

enum class ScalarOpKind {
#define KILN_SCALAR_OP_ENUM(e, name, arity, rule, complex_ok) e,
  KILN_SCALAR_OPS(KILN_SCALAR_OP_ENUM)
#undef KILN_SCALAR_OP_ENUM
};

// Number of scalar ops.
int NumScalarOps();

struct ScalarProgram;

// A scalar op: its kind and, for kCast, the target dtype, for kComposite, the program. Equal
// values are equal ops.
struct ScalarOp {
  ScalarOp(ScalarOpKind k, DType cast = DType::kFloat64,  // NOLINT: implicit by design
           std::shared_ptr<const ScalarProgram> p = nullptr)
      : kind(k), cast_to(cast), program(std::move(p)) {}
  ScalarOpKind kind;
  DType cast_to;                                 // meaningful for kCast only
  std::shared_ptr<const ScalarProgram> program;  // meaningful for kComposite only

  bool operator==(const ScalarOp& o) const;
  // Aesara's name: "mul", "true_div", "Cast{float32}".
  std::string Name() const;
  // The name Elemwise prints: "Elemwise{mul,no_inplace}", "Elemwise{scalar_maximum,no_inplace}",
  // "Elemwise{Cast{float32}}", "Elemwise{identity}".
  std::string ElemwiseName() const;
};

// Number of inputs, -1 for ops taking two or more (add, mul), -2 for Composite (its program's).
int ScalarOpArity(ScalarOpKind op);
// Aesara's scalar name, "mul".
std::string ScalarOpName(ScalarOpKind op);
// The scalar op of an Aesara name ("mul"), or nullopt.
std::optional<ScalarOpKind> ParseScalarOpKind(const std::string& name);

// The output dtype for these input dtypes, or why the op does not accept them.
absl::StatusOr<DType> ScalarOutputDType(const ScalarOp& op, std::span<const DType> inputs);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SCALAR_OP_H_
