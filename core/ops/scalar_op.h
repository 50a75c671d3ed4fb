// The scalar ops that Elemwise maps over tensors (Aesara's aesara.scalar), their names and dtype
// rules.
#ifndef KILN_CORE_OPS_SCALAR_OP_H_
#define KILN_CORE_OPS_SCALAR_OP_H_

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "core/tensor/dtype.h"

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

// Every scalar op, listed once. X(enum, Aesara scalar name, arity (-1: two or more), dtype rule
// (DTypeRule::k...), complex inputs allowed, algebraic properties, the builder math.h declares
// (U(name): unary, B(name): binary, N(): written by hand), the operator symbol (nullptr: none;
// prefix when unary), whether Aesara's pp prints the op with its symbol, and the kernel unit
// that instantiates its kernels (elemwise_kernels_<unit>.cc; special: Elemwise runs it itself).
// clang-format off
#define KILN_SCALAR_OPS(X) \
  X(kLt, "lt", 2, kBool, false, kNoAlgebra, B(lt), "<", false, compare)                                      \
  X(kGt, "gt", 2, kBool, false, kNoAlgebra, B(gt), ">", false, compare)                                      \
  X(kLe, "le", 2, kBool, false, kNoAlgebra, B(le), "<=", false, compare)                                     \
  X(kGe, "ge", 2, kBool, false, kNoAlgebra, B(ge), ">=", false, compare)                                     \
  X(kEq, "eq", 2, kBool, true, kCommutative, B(eq), "==", false, compare)                                    \
  X(kNeq, "neq", 2, kBool, true, kCommutative, B(neq), "!=", false, compare)                                 \
  X(kAnd, "and_", 2, kBitwise, false, kCommutativeAssociative, B(and_), "&", false, compare)                 \
  X(kOr, "or_", 2, kBitwise, false, kCommutativeAssociative, B(or_), "|", false, compare)                    \
  X(kXor, "xor", 2, kBitwise, false, kCommutativeAssociative, B(xor_), "^", false, compare)                  \
  X(kInvert, "invert", 1, kBitwise, false, kNoAlgebra, U(invert), "~", false, compare)                       \
  X(kIsNan, "isnan", 1, kBool, true, kNoAlgebra, U(isnan), nullptr, false, compare)                          \
  X(kIsInf, "isinf", 1, kBool, true, kNoAlgebra, U(isinf), nullptr, false, compare)                          \
  X(kSwitch, "switch", 3, kBranches, true, kNoAlgebra, N(), nullptr, false, special)                         \
  X(kMaximum, "maximum", 2, kUpcast, false, kCommutativeAssociative, B(maximum), nullptr, false, arith)      \
  X(kMinimum, "minimum", 2, kUpcast, false, kCommutativeAssociative, B(minimum), nullptr, false, arith)      \
  X(kAdd, "add", -1, kUpcast, true, kSumMonoid, B(add), "+", true, arith)                                    \
  X(kSub, "sub", 2, kUpcastNoBool, true, kNoAlgebra, B(sub), "-", true, arith)                               \
  X(kMul, "mul", -1, kUpcast, true, kProductMonoid, B(mul), "*", true, arith)                                \
  X(kTrueDiv, "true_divide", 2, kTrueDiv, true, kNoAlgebra, B(true_div), "/", true, arith)                   \
  X(kIntDiv, "floor_divide", 2, kUpcast, false, kNoAlgebra, B(int_div), "//", true, arith)                   \
  X(kMod, "mod", 2, kUpcast, false, kNoAlgebra, B(mod), "%", false, arith)                                   \
  X(kPow, "pow", 2, kUpcastMin8, true, kNoAlgebra, B(pow), "**", true, arith)                                \
  X(kClip, "clip", 3, kUpcast, false, kNoAlgebra, N(), nullptr, false, arith)                                \
  X(kAbs, "abs", 1, kRealPart, true, kNoAlgebra, U(abs), nullptr, false, unary)                              \
  X(kSgn, "sgn", 1, kSameNoBool, false, kNoAlgebra, U(sgn), nullptr, false, unary)                           \
  X(kCeil, "ceil", 1, kUpgradeToFloat, false, kNoAlgebra, U(ceil), nullptr, false, unary)                    \
  X(kFloor, "floor", 1, kUpgradeToFloat, false, kNoAlgebra, U(floor), nullptr, false, unary)                 \
  X(kTrunc, "trunc", 1, kUpgradeToFloat, false, kNoAlgebra, U(trunc), nullptr, false, unary)                 \
  X(kRoundHalfToEven, "round_half_to_even", 1, kSameFloatOnly, false, kNoAlgebra, U(round_half_to_even), nullptr, false, unary) \
  X(kRoundHalfAwayFromZero, "round_half_away_from_zero", 1, kSameFloatOnly, false, kNoAlgebra,               \
    U(round_half_away_from_zero), nullptr, false, unary)                                                     \
  X(kNeg, "neg", 1, kSameNoBool, true, kNoAlgebra, U(neg), "-", true, unary)                                 \
  X(kReciprocal, "reciprocal", 1, kUpgradeToFloat, true, kNoAlgebra, U(reciprocal), nullptr, false, unary)   \
  X(kLog, "log", 1, kUpgradeToFloat, true, kNoAlgebra, U(log), nullptr, false, transcendental)               \
  X(kLog2, "log2", 1, kUpgradeToFloat, false, kNoAlgebra, U(log2), nullptr, false, transcendental)           \
  X(kLog10, "log10", 1, kUpgradeToFloat, false, kNoAlgebra, U(log10), nullptr, false, transcendental)        \
  X(kLog1p, "log1p", 1, kUpgradeToFloat, false, kNoAlgebra, U(log1p), nullptr, false, transcendental)        \
  X(kExp, "exp", 1, kUpgradeToFloat, true, kNoAlgebra, U(exp), nullptr, false, transcendental)               \
  X(kExp2, "exp2", 1, kUpgradeToFloat, false, kNoAlgebra, U(exp2), nullptr, false, transcendental)           \
  X(kExpm1, "expm1", 1, kUpgradeToFloat, false, kNoAlgebra, U(expm1), nullptr, false, transcendental)        \
  X(kSqr, "sqr", 1, kSame, true, kNoAlgebra, U(sqr), nullptr, false, unary)                                  \
  X(kSqrt, "sqrt", 1, kUpgradeToFloat, true, kNoAlgebra, U(sqrt), nullptr, false, transcendental)            \
  X(kDeg2Rad, "deg2rad", 1, kUpgradeToFloat, false, kNoAlgebra, U(deg2rad), nullptr, false, transcendental)  \
  X(kRad2Deg, "rad2deg", 1, kUpgradeToFloat, false, kNoAlgebra, U(rad2deg), nullptr, false, transcendental)  \
  X(kCos, "cos", 1, kUpgradeToFloat, false, kNoAlgebra, U(cos), nullptr, false, transcendental)              \
  X(kArccos, "arccos", 1, kUpgradeToFloat, false, kNoAlgebra, U(arccos), nullptr, false, transcendental)     \
  X(kSin, "sin", 1, kUpgradeToFloat, false, kNoAlgebra, U(sin), nullptr, false, transcendental)              \
  X(kArcsin, "arcsin", 1, kUpgradeToFloat, false, kNoAlgebra, U(arcsin), nullptr, false, transcendental)     \
  X(kTan, "tan", 1, kUpgradeToFloat, false, kNoAlgebra, U(tan), nullptr, false, transcendental)              \
  X(kArctan, "arctan", 1, kUpgradeToFloat, false, kNoAlgebra, U(arctan), nullptr, false, transcendental)     \
  X(kArctan2, "arctan2", 2, kUpgradeToFloat, false, kNoAlgebra, B(arctan2), nullptr, false, transcendental)  \
  X(kCosh, "cosh", 1, kUpgradeToFloat, false, kNoAlgebra, U(cosh), nullptr, false, transcendental)           \
  X(kArccosh, "arccosh", 1, kUpgradeToFloat, false, kNoAlgebra, U(arccosh), nullptr, false, transcendental)  \
  X(kSinh, "sinh", 1, kUpgradeToFloat, false, kNoAlgebra, U(sinh), nullptr, false, transcendental)           \
  X(kArcsinh, "arcsinh", 1, kUpgradeToFloat, false, kNoAlgebra, U(arcsinh), nullptr, false, transcendental)  \
  X(kTanh, "tanh", 1, kUpgradeToFloat, false, kNoAlgebra, U(tanh), nullptr, false, transcendental)           \
  X(kArctanh, "arctanh", 1, kUpgradeToFloat, false, kNoAlgebra, U(arctanh), nullptr, false, transcendental)  \
  X(kErf, "erf", 1, kUpgradeToFloat, false, kNoAlgebra, U(erf), nullptr, false, transcendental)              \
  X(kErfc, "erfc", 1, kUpgradeToFloat, false, kNoAlgebra, U(erfc), nullptr, false, transcendental)           \
  X(kErfcx, "erfcx", 1, kUpgradeToFloat, false, kNoAlgebra, U(erfcx), nullptr, false, transcendental)        \
  X(kErfinv, "erfinv", 1, kUpgradeToFloat, false, kNoAlgebra, U(erfinv), nullptr, false, transcendental)     \
  X(kErfcinv, "erfcinv", 1, kUpgradeToFloat, false, kNoAlgebra, U(erfcinv), nullptr, false, transcendental)  \
  X(kGamma, "gamma", 1, kUpgradeToFloat, false, kNoAlgebra, U(gamma), nullptr, false, transcendental)        \
  X(kGammaln, "gammaln", 1, kUpgradeToFloat, false, kNoAlgebra, U(gammaln), nullptr, false, transcendental)  \
  X(kPsi, "psi", 1, kUpgradeToFloat, false, kNoAlgebra, U(psi), nullptr, false, transcendental)              \
  X(kSigmoid, "sigmoid", 1, kUpgradeToFloat, false, kNoAlgebra, U(sigmoid), nullptr, false, transcendental)  \
  X(kSoftplus, "softplus", 1, kUpgradeToFloat, false, kNoAlgebra, U(softplus), nullptr, false, transcendental) \
  X(kLog1mexp, "log1mexp", 1, kUpgradeToFloat, false, kNoAlgebra, U(log1mexp), nullptr, false, transcendental) \
  X(kJ0, "j0", 1, kUpgradeToFloat, false, kNoAlgebra, U(j0), nullptr, false, transcendental)                 \
  X(kJ1, "j1", 1, kUpgradeToFloat, false, kNoAlgebra, U(j1), nullptr, false, transcendental)                 \
  X(kI0, "i0", 1, kUpgradeToFloat, false, kNoAlgebra, U(i0), nullptr, false, transcendental)                 \
  X(kI1, "i1", 1, kUpgradeToFloat, false, kNoAlgebra, U(i1), nullptr, false, transcendental)                 \
  X(kXlogX, "xlogx", 1, kUpgradeToFloat, false, kNoAlgebra, U(xlogx), nullptr, false, transcendental)        \
  X(kXlogY0, "xlogy0", 2, kUpgradeToFloat, false, kNoAlgebra, B(xlogy0), nullptr, false, transcendental)     \
  /* special functions (special_fns.h): kernels in special_kernels.cc, gradients in special_grad.cc */ \
  X(kTriGamma, "tri_gamma", 1, kUpgradeToFloat, false, kNoAlgebra, U(tri_gamma), nullptr, false, special)      \
  X(kPolygamma, "polygamma", 2, kUpgradeToFloat, false, kNoAlgebra, B(polygamma), nullptr, false, special)     \
  X(kOwensT, "owens_t", 2, kUpgradeToFloat, false, kNoAlgebra, B(owens_t), nullptr, false, special)            \
  X(kGammaInc, "gammainc", 2, kUpgradeToFloat, false, kNoAlgebra, B(gammainc), nullptr, false, special)        \
  X(kGammaIncC, "gammaincc", 2, kUpgradeToFloat, false, kNoAlgebra, B(gammaincc), nullptr, false, special)     \
  X(kGammaIncDer, "gammainc_der", 2, kUpgradeToFloat, false, kNoAlgebra, B(gammainc_der), nullptr, false, special)\
  X(kGammaIncCDer, "gammaincc_der", 2, kUpgradeToFloat, false, kNoAlgebra, B(gammaincc_der), nullptr, false, special)\
  X(kGammaU, "gammau", 2, kUpgradeToFloat, false, kNoAlgebra, B(gammau), nullptr, false, special)              \
  X(kGammaL, "gammal", 2, kUpgradeToFloat, false, kNoAlgebra, B(gammal), nullptr, false, special)              \
  X(kGammaIncInv, "gammaincinv", 2, kUpgradeToFloat, false, kNoAlgebra, B(gammaincinv), nullptr, false, special)\
  X(kGammaIncCInv, "gammainccinv", 2, kUpgradeToFloat, false, kNoAlgebra, B(gammainccinv), nullptr, false, special)\
  X(kBetaInc, "betainc", 3, kUpgradeToFloat, false, kNoAlgebra, N(), nullptr, false, special)                  \
  X(kBetaIncDer, "betainc_der", 4, kUpgradeToFloat, false, kNoAlgebra, N(), nullptr, false, special)           \
  X(kBetaIncInv, "betaincinv", 3, kUpgradeToFloat, false, kNoAlgebra, N(), nullptr, false, special)            \
  X(kJv, "jv", 2, kUpgradeToFloat, false, kNoAlgebra, B(jv), nullptr, false, special)                          \
  X(kIv, "iv", 2, kUpgradeToFloat, false, kNoAlgebra, B(iv), nullptr, false, special)                          \
  X(kIve, "ive", 2, kUpgradeToFloat, false, kNoAlgebra, B(ive), nullptr, false, special)                       \
  X(kKve, "kve", 2, kUpgradeToFloat, false, kNoAlgebra, B(kve), nullptr, false, special)                       \
  X(kHyp2F1, "hyp2f1", 4, kUpgradeToFloat, false, kNoAlgebra, N(), nullptr, false, special)                    \
  X(kHyp2F1Der, "hyp2f1_der", 5, kUpgradeToFloat, false, kNoAlgebra, N(), nullptr, false, special)             \
  X(kIdentity, "identity", 1, kSame, true, kNoAlgebra, U(identity), nullptr, false, unary)                   \
  X(kSecond, "second", 2, kSecondInput, true, kNoAlgebra, B(second), nullptr, false, special)                \
  X(kCast, "cast", 1, kCast, true, kNoAlgebra, N(), nullptr, false, special)                                 \
  X(kReal, "real", 1, kRealPart, true, kNoAlgebra, U(real), nullptr, false, unary)                           \
  X(kImag, "imag", 1, kRealPart, true, kNoAlgebra, U(imag), nullptr, false, unary)                           \
  X(kConj, "conj", 1, kSameMin8, true, kNoAlgebra, U(conj), nullptr, false, unary)                           \
  X(kAngle, "angle", 1, kFloat64, true, kNoAlgebra, U(angle), nullptr, false, unary)                         \
  X(kComposite, "composite", -2, kProgram, true, kNoAlgebra, N(), nullptr, false, special)
// clang-format on

enum class ScalarOpKind {
#define KILN_SCALAR_OP_ENUM(e, ...) e,
  KILN_SCALAR_OPS(KILN_SCALAR_OP_ENUM)
#undef KILN_SCALAR_OP_ENUM
};

// Number of scalar ops.
inline constexpr int kNumScalarOps = 0
#define KILN_SCALAR_OP_COUNT(...) +1
    KILN_SCALAR_OPS(KILN_SCALAR_OP_COUNT);
#undef KILN_SCALAR_OP_COUNT
int NumScalarOps();

// The files that instantiate the scalar ops' kernels (the table's last column).
enum class KernelUnit { arith, compare, transcendental, unary, special };
// Each scalar op's kernel unit, indexed by ScalarOpKind.
inline constexpr KernelUnit kScalarKernelUnits[] = {
#define KILN_SCALAR_OP_UNIT(e, name, arity, rule, complex_ok, algebra, builder, symbol, pp, unit) \
  KernelUnit::unit,
    KILN_SCALAR_OPS(KILN_SCALAR_OP_UNIT)
#undef KILN_SCALAR_OP_UNIT
};

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
// The operator symbol ("+", "<", unary "-"), or null for an op written as a call.
const char* ScalarOpSymbol(ScalarOpKind op);
// True when Aesara's pp prints the op with its symbol (arithmetic, not comparisons or bitwise).
bool PpPrintsSymbol(ScalarOpKind op);
// The scalar op of an Aesara name ("mul"), or nullopt.
std::optional<ScalarOpKind> ParseScalarOpKind(const std::string& name);

// The output dtype for these input dtypes, or why the op does not accept them.
absl::StatusOr<DType> ScalarOutputDType(const ScalarOp& op, std::span<const DType> inputs);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SCALAR_OP_H_
