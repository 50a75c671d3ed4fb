#include "core/ops/nlinalg_norm.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/math.h"
#include "core/ops/nlinalg_decomp.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {
namespace {

Var Error(const std::string& message) {
  return Var(absl::InvalidArgumentError(absl::StrCat("norm: ", message)));
}

// The order as a number when it is one ("inf" and "-inf" included), else nullopt.
std::optional<double> Number(const NormOrd& ord) {
  if (const double* p = std::get_if<double>(&ord)) return *p;
  if (const std::string* s = std::get_if<std::string>(&ord)) {
    if (*s == "inf") return std::numeric_limits<double>::infinity();
    if (*s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

std::string Describe(const NormOrd& ord) {
  if (const double* p = std::get_if<double>(&ord)) return absl::StrCat(*p);
  if (const std::string* s = std::get_if<std::string>(&ord)) return absl::StrCat("'", *s, "'");
  return "None";
}

bool IsName(const NormOrd& ord, const char* name) {
  const std::string* s = std::get_if<std::string>(&ord);
  return s != nullptr && *s == name;
}

// sqrt(sum |x|^2) over the axes.
Var TwoNorm(const Var& x, Axes axes, bool keepdims) {
  const Var a = abs(x);
  return sqrt(sum(a * a, std::move(axes), keepdims));
}

Var VectorNorm(const Var& x, const NormOrd& ord, int axis, bool keepdims) {
  if (std::holds_alternative<std::monostate>(ord) ||
      ((IsName(ord, "fro") || IsName(ord, "f")) && x.ndim() >= 2)) {
    return TwoNorm(x, axis, keepdims);
  }
  const std::optional<double> p = Number(ord);
  if (!p) return Error(absl::StrCat("Invalid norm order ", Describe(ord), " for vectors"));
  if (std::isinf(*p)) return *p > 0 ? max(abs(x), axis, keepdims) : min(abs(x), axis, keepdims);
  if (*p == 0) return sum(neq(x, constant(0.0)), axis, keepdims);
  if (*p == 1) return sum(abs(x), axis, keepdims);
  return pow(sum(pow(abs(x), *p), axis, keepdims), 1.0 / *p);
}

Var MatrixNorm(const Var& x, const NormOrd& ord, int row, int col) {
  if (std::holds_alternative<std::monostate>(ord) || IsName(ord, "fro") || IsName(ord, "f")) {
    return TwoNorm(x, {row, col}, false);
  }
  const std::optional<double> p = Number(ord);
  if (p && std::isinf(*p)) {  // the largest (smallest) row sum
    const Var rows = sum(abs(x), col);
    return *p > 0 ? max(rows, row > col ? row - 1 : row) : min(rows, row > col ? row - 1 : row);
  }
  if (p && (*p == 1 || *p == -1)) {  // the largest (smallest) column sum
    const Var cols = sum(abs(x), row);
    return *p > 0 ? max(cols, col > row ? col - 1 : col) : min(cols, col > row ? col - 1 : col);
  }
  if ((p && (*p == 2 || *p == -2)) || IsName(ord, "nuc")) {
    if (x.ndim() != 2) return Error("the orders 2, -2 and 'nuc' take the SVD of one matrix");
    const Var s = svd(row < col ? x : transpose(x), false, false)[0];
    if (IsName(ord, "nuc")) return sum(s);
    return *p > 0 ? max(s) : min(s);
  }
  return Error(absl::StrCat("Invalid norm order for matrices: ", Describe(ord)));
}

}  // namespace

Var norm(const Var& x, const NormOrd& ord, std::vector<int> axis, bool keepdims) {
  if (!x.ok()) return x;
  const int nd = x.ndim();
  if (nd == 0) return Error("'axis' entry is out of bounds.");
  if (axis.empty()) axis = nd == 1 ? std::vector<int>{0} : std::vector<int>{nd - 2, nd - 1};
  for (int& a : axis) {
    if (a < -nd || a >= nd) return Error(absl::StrCat("axis ", a, " is out of bounds"));
    a = a < 0 ? a + nd : a;
  }
  if (axis.size() == 1) return VectorNorm(x, ord, axis[0], keepdims);
  if (axis.size() != 2) return Error("Improper number of dimensions to norm.");
  if (axis[0] == axis[1]) return Error("Duplicate axes given.");
  Var out = MatrixNorm(x, ord, axis[0], axis[1]);
  if (!keepdims) return out;
  for (int a : {std::min(axis[0], axis[1]), std::max(axis[0], axis[1])}) {
    out = expand_dims(out, a);
  }
  return out;
}

}  // namespace kiln
