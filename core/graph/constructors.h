// Aesara's tensor constructors (dmatrix, irow, ftensor3...) and constants from C++ values.
#ifndef KILN_CORE_GRAPH_CONSTRUCTORS_H_
#define KILN_CORE_GRAPH_CONSTRUCTORS_H_

#include <optional>
#include <string>

#include "core/tensor/dtype.h"
#include "core/graph/type.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"

namespace kiln {

// An unknown dim in a static shape: tensor(DType::kFloat64, {kUnknownDim, 3}).
inline constexpr std::nullopt_t kUnknownDim = std::nullopt;

// The dtype of the unprefixed constructors (scalar, vector, matrix...): Aesara's floatX.
inline constexpr DType kFloatX = DType::kFloat64;

// A symbolic input of any dtype and static shape.
Var tensor(DType dtype, StaticShape shape, std::string name = "");
// Same, with the dtype by NumPy name ("float32"); a failed Var when the name is unknown.
Var tensor(std::string_view dtype, StaticShape shape, std::string name = "");

// Aesara's named constructors: prefix b=int8 w=int16 i=int32 l=int64 f=float32 d=float64
// c=complex64 z=complex128, none=floatX; scalar (), vector (?,), row (1, ?), col (?, 1),
// matrix (?, ?), tensor3..tensor7 (all unknown).
#define KILN_DECLARE_CONSTRUCTORS(prefix)     \
  Var prefix##scalar(std::string name = "");  \
  Var prefix##vector(std::string name = "");  \
  Var prefix##row(std::string name = "");     \
  Var prefix##col(std::string name = "");     \
  Var prefix##matrix(std::string name = "");  \
  Var prefix##tensor3(std::string name = ""); \
  Var prefix##tensor4(std::string name = ""); \
  Var prefix##tensor5(std::string name = ""); \
  Var prefix##tensor6(std::string name = ""); \
  Var prefix##tensor7(std::string name = "");
KILN_DECLARE_CONSTRUCTORS()
KILN_DECLARE_CONSTRUCTORS(b)
KILN_DECLARE_CONSTRUCTORS(w)
KILN_DECLARE_CONSTRUCTORS(i)
KILN_DECLARE_CONSTRUCTORS(l)
KILN_DECLARE_CONSTRUCTORS(f)
KILN_DECLARE_CONSTRUCTORS(d)
KILN_DECLARE_CONSTRUCTORS(c)
KILN_DECLARE_CONSTRUCTORS(z)
#undef KILN_DECLARE_CONSTRUCTORS

// TensorConstants from C++ values, by Aesara's rules: an integer takes the smallest of
// int8/16/32/64 that holds it (2 -> int8, 300 -> int16); a double is float32 when float32 holds it
// exactly (2.0, 0.5) and float64 otherwise (0.1, NaN); a float is float32; a bool is bool.
Var constant(double value, std::string name = "");
Var constant(float value, std::string name = "");
Var constant(int64_t value, std::string name = "");
Var constant(int value, std::string name = "");
Var constant(bool value, std::string name = "");
// A constant holding `data`, typed by its dtype and full static shape.
Var constant(Tensor data, std::string name = "");
// A 0-d constant of exactly `dtype` (value converted as numpy.astype does).
Var scalar_constant(double value, DType dtype);
Var scalar_constant(int64_t value, DType dtype);

// The dtype Aesara gives a Python int / float literal.
DType AutocastIntDType(int64_t value);
DType AutocastFloatDType(double value);

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_CONSTRUCTORS_H_
