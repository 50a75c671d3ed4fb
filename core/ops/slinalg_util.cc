#include "core/ops/slinalg_util.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/ops/memory_check.h"
#include "core/ops/op_util.h"

namespace kiln::slinalg {

DType LapackDType(DType a, DType b) {
  const bool complex = IsComplex(a) || IsComplex(b);
  // 'd' unless float32 holds the dtype (complex64 counts as single precision).
  auto is_double = [](DType d) {
    if (d == DType::kComplex64) return false;
    if (d == DType::kComplex128) return true;
    return !CanCastSafely(d, DType::kFloat32);
  };
  const bool wide = is_double(a) || is_double(b);
  if (complex) return wide ? DType::kComplex128 : DType::kComplex64;
  return wide ? DType::kFloat64 : DType::kFloat32;
}

absl::StatusOr<const TensorType*> MatrixInput(const Op& op, const std::vector<VariablePtr>& in,
                                              size_t i, const char* name, int ndim) {
  const TensorType* t = in[i]->tensor_type();
  if (t == nullptr) {
    return Invalid(op, absl::StrCat("input ", i, " (", name, ") has type ",
                                    in[i]->type()->ToString(), ", which is not a TensorType"));
  }
  const bool rank_ok = ndim >= 0 ? t->ndim() == ndim : (t->ndim() == 1 || t->ndim() == 2);
  if (!rank_ok) {
    return Invalid(op,
                   absl::StrCat("input ", i, " (", name, ") has type ", t->ToString(), ": `", name,
                                "` must be ", ndim == 2 ? "a matrix" : "a matrix or a vector"));
  }
  return t;
}

absl::Status CheckStaticSquare(const Op& op, const TensorType& t, size_t i, const char* name) {
  const StaticDim rows = t.shape()[0], cols = t.shape()[1];
  if (rows && cols && *rows != *cols) {
    return Invalid(op, absl::StrCat("input ", i, " (", name, ") has type ", t.ToString(),
                                    ": expected a square matrix"));
  }
  return absl::OkStatus();
}

absl::Status CheckSquare(const Op& op, const Tensor& t, int i, const char* name) {
  if (t.ndim() != 2 || t.shape()[0] != t.shape()[1]) {
    return Invalid(op, absl::StrCat("input ", i, " (", name, ") has shape ",
                                    ShapeToString(t.shape()), ": expected a square matrix"));
  }
  return CheckLapackDims(op, t, i, name);
}

absl::Status CheckLapackDims(const Op& op, const Tensor& t, int i, const char* name) {
  for (int64_t d : t.shape()) {
    if (d > kMaxLapackDim) {
      return Invalid(op,
                     absl::StrCat("input ", i, " (", name, ") has shape ", ShapeToString(t.shape()),
                                  ": LAPACK takes dims up to ", kMaxLapackDim));
    }
  }
  // The kernels copy it into LAPACK's layout: a size past the call's memory (a broadcast view
  // of a 10^6-square matrix) is refused before that copy or a scan of its elements.
  const std::optional<int64_t> bytes = CheckedMul(t.size(), DTypeSize(LapackDType(t.dtype())));
  return CheckBytesFit(bytes.value_or(-1), [&] {
    return absl::StrCat(op.Name(), ": input ", i, " (", name, ") of shape ",
                        ShapeToString(t.shape()), " in LAPACK's layout");
  });
}

namespace {

// True when the `count` reals at p (a complex value is two) are all finite: a sum of x - x is
// 0 for finite x and NaN otherwise, which vectorizes without a branch per element.
template <typename R>
bool AllFinite(const R* p, int64_t count) {
  constexpr int kLanes = 8;  // independent sums, so that the adds pipeline
  R acc[kLanes] = {};
  int64_t e = 0;
  for (; e + kLanes <= count; e += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += p[e + l] - p[e + l];
  }
  for (; e < count; ++e) acc[0] += p[e] - p[e];
  R total = 0;
  for (R a : acc) total += a;
  return total == 0;
}

}  // namespace

absl::Status CheckFinite(const Op& op, const Tensor& t, int i, const char* name) {
  const DType d = t.dtype();
  if (!IsFloat(d) && !IsComplex(d)) return absl::OkStatus();  // integers are finite
  // Float32/64 and complex data are scanned where they are (a copy only when strided).
  const bool single = d == DType::kFloat32 || d == DType::kComplex64;
  const bool native = single || d == DType::kFloat64 || d == DType::kComplex128;
  const Tensor c =
      native ? t.Contiguous() : t.AsType(IsComplex(d) ? DType::kComplex128 : DType::kFloat64);
  const int64_t reals = c.size() * (IsComplex(c.dtype()) ? 2 : 1);
  const bool finite = single ? AllFinite(static_cast<const float*>(c.raw_data()), reals)
                             : AllFinite(static_cast<const double*>(c.raw_data()), reals);
  if (finite) return absl::OkStatus();
  return Invalid(op, absl::StrCat("input ", i, " (", name,
                                  ") must not contain infs or NaNs (check_finite=True)"));
}

}  // namespace kiln::slinalg
