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

// The algebraic properties of a scalar op that rewrites rely on: a column of the table below.
struct ScalarAlgebra {
  bool commutative = false;  // f(a, b) == f(b, a)
  bool associative = false;  // f(f(a, b), c) == f(a, f(b, c)), so f may take any number of operands
  std::optional<double> identity;  // f(x, identity) == x
};
inline constexpr ScalarAlgebra kNoAlgebra{};
inline constexpr ScalarAlgebra kCommutative{true, false};
inline constexpr ScalarAlgebra kCommutativeAssociative{true, true};
inline constexpr ScalarAlgebra kSumMonoid{true, true, 0.0};
inline constexpr ScalarAlgebra kProductMonoid{true, true, 1.0};

// Every scalar op, listed once. X(enum, Aesara scalar name, arity (-1: two or more), dtype rule,
// complex inputs allowed, algebraic properties).
#define KILN_SCALAR_OPS(X)                                                                    \
  X(kLt, "lt", 2, DTypeRule::kBool, false, kNoAlgebra)                                        \
  X(kGt, "gt", 2, DTypeRule::kBool, false, kNoAlgebra)                                        \
  X(kLe, "le", 2, DTypeRule::kBool, false, kNoAlgebra)                                        \
  X(kGe, "ge", 2, DTypeRule::kBool, false, kNoAlgebra)                                        \
  X(kEq, "eq", 2, DTypeRule::kBool, true, kCommutative)                                       \
  X(kNeq, "neq", 2, DTypeRule::kBool, true, kCommutative)                                     \
  X(kAnd, "and_", 2, DTypeRule::kBitwise, false, kCommutativeAssociative)                     \
  X(kOr, "or_", 2, DTypeRule::kBitwise, false, kCommutativeAssociative)                       \
  X(kXor, "xor", 2, DTypeRule::kBitwise, false, kCommutativeAssociative)                      \
  X(kInvert, "invert", 1, DTypeRule::kBitwise, false, kNoAlgebra)                             \
  X(kIsNan, "isnan", 1, DTypeRule::kBool, true, kNoAlgebra)                                   \
  X(kIsInf, "isinf", 1, DTypeRule::kBool, true, kNoAlgebra)                                   \
  X(kSwitch, "switch", 3, DTypeRule::kBranches, true, kNoAlgebra)                             \
  X(kMaximum, "maximum", 2, DTypeRule::kUpcast, false, kCommutativeAssociative)               \
  X(kMinimum, "minimum", 2, DTypeRule::kUpcast, false, kCommutativeAssociative)               \
  X(kAdd, "add", -1, DTypeRule::kUpcast, true, kSumMonoid)                                    \
  X(kSub, "sub", 2, DTypeRule::kUpcastNoBool, true, kNoAlgebra)                               \
  X(kMul, "mul", -1, DTypeRule::kUpcast, true, kProductMonoid)                                \
  X(kTrueDiv, "true_divide", 2, DTypeRule::kTrueDiv, true, kNoAlgebra)                        \
  X(kIntDiv, "floor_divide", 2, DTypeRule::kUpcast, false, kNoAlgebra)                        \
  X(kMod, "mod", 2, DTypeRule::kUpcast, false, kNoAlgebra)                                    \
  X(kPow, "pow", 2, DTypeRule::kUpcastMin8, true, kNoAlgebra)                                 \
  X(kClip, "clip", 3, DTypeRule::kUpcast, false, kNoAlgebra)                                  \
  X(kAbs, "abs", 1, DTypeRule::kRealPart, true, kNoAlgebra)                                   \
  X(kSgn, "sgn", 1, DTypeRule::kSameNoBool, false, kNoAlgebra)                                \
  X(kCeil, "ceil", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                          \
  X(kFloor, "floor", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                        \
  X(kTrunc, "trunc", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                        \
  X(kRoundHalfToEven, "round_half_to_even", 1, DTypeRule::kSameFloatOnly, false, kNoAlgebra)  \
  X(kRoundHalfAwayFromZero, "round_half_away_from_zero", 1, DTypeRule::kSameFloatOnly, false, \
    kNoAlgebra)                                                                               \
  X(kNeg, "neg", 1, DTypeRule::kSameNoBool, true, kNoAlgebra)                                 \
  X(kReciprocal, "reciprocal", 1, DTypeRule::kUpgradeToFloat, true, kNoAlgebra)               \
  X(kLog, "log", 1, DTypeRule::kUpgradeToFloat, true, kNoAlgebra)                             \
  X(kLog2, "log2", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                          \
  X(kLog10, "log10", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                        \
  X(kLog1p, "log1p", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                        \
  X(kExp, "exp", 1, DTypeRule::kUpgradeToFloat, true, kNoAlgebra)                             \
  X(kExp2, "exp2", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                          \
  X(kExpm1, "expm1", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                        \
  X(kSqr, "sqr", 1, DTypeRule::kSame, true, kNoAlgebra)                                       \
  X(kSqrt, "sqrt", 1, DTypeRule::kUpgradeToFloat, true, kNoAlgebra)                           \
  X(kDeg2Rad, "deg2rad", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kRad2Deg, "rad2deg", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kCos, "cos", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                            \
  X(kArccos, "arccos", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                      \
  X(kSin, "sin", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                            \
  X(kArcsin, "arcsin", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                      \
  X(kTan, "tan", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                            \
  X(kArctan, "arctan", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                      \
  X(kArctan2, "arctan2", 2, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kCosh, "cosh", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                          \
  X(kArccosh, "arccosh", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kSinh, "sinh", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                          \
  X(kArcsinh, "arcsinh", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kTanh, "tanh", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                          \
  X(kArctanh, "arctanh", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kErf, "erf", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                            \
  X(kErfc, "erfc", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                          \
  X(kErfcx, "erfcx", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                        \
  X(kErfinv, "erfinv", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                      \
  X(kErfcinv, "erfcinv", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kGamma, "gamma", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                        \
  X(kGammaln, "gammaln", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kPsi, "psi", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                            \
  X(kSigmoid, "sigmoid", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                    \
  X(kSoftplus, "softplus", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                  \
  X(kLog1mexp, "log1mexp", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                  \
  X(kJ0, "j0", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                              \
  X(kJ1, "j1", 1, DTypeRule::kUpgradeToFloat, false, kNoAlgebra)                              \
  X(kIdentity, "identity", 1, DTypeRule::kSame, true, kNoAlgebra)                             \
  X(kSecond, "second", 2, DTypeRule::kSecondInput, true, kNoAlgebra)                          \
  X(kCast, "cast", 1, DTypeRule::kCast, true, kNoAlgebra)                                     \
  X(kReal, "real", 1, DTypeRule::kRealPart, true, kNoAlgebra)                                 \
  X(kImag, "imag", 1, DTypeRule::kRealPart, true, kNoAlgebra)                                 \
  X(kConj, "conj", 1, DTypeRule::kSameMin8, true, kNoAlgebra)                                 \
  X(kAngle, "angle", 1, DTypeRule::kFloat64, true, kNoAlgebra)                                \
  X(kComposite, "composite", -2, DTypeRule::kProgram, true, kNoAlgebra)

enum class ScalarOpKind {
#define KILN_SCALAR_OP_ENUM(e, name, arity, rule, complex_ok, algebra) e,
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
  // Aesara's name: "mul", "true_divide", "Cast{float32}".
  std::string Name() const;
  // The name Elemwise prints: "Elemwise{mul,no_inplace}", "Elemwise{scalar_maximum,no_inplace}",
  // "Elemwise{Cast{float32}}", "Elemwise{identity}".
  std::string ElemwiseName() const;
};

// Number of inputs, -1 for ops taking two or more (add, mul), -2 for Composite (its program's).
int ScalarOpArity(ScalarOpKind op);
// Its commutativity, associativity and identity element.
const ScalarAlgebra& ScalarOpAlgebra(ScalarOpKind op);
// Aesara's scalar name, "mul".
std::string ScalarOpName(ScalarOpKind op);
// The scalar op of an Aesara name ("mul"), or nullopt.
std::optional<ScalarOpKind> ParseScalarOpKind(const std::string& name);

// The output dtype for these input dtypes, or why the op does not accept them.
absl::StatusOr<DType> ScalarOutputDType(const ScalarOp& op, std::span<const DType> inputs);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SCALAR_OP_H_
