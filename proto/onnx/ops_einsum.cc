// ONNX's Det (Kiln's Det, Blockwise over leading dims) and Einsum: each operand's repeated labels
// taken as diagonals, the operands laid out on one set of axes (ellipsis dims first, then the
// labels in order of appearance) and multiplied with broadcasting, the labels not in the output
// summed, and the result transposed to the output's order.
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/ops/blockwise.h"
#include "core/ops/diagonal.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/math.h"
#include "core/ops/nlinalg.h"
#include "core/ops/reduce.h"
#include "proto/onnx/import_node.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

Outs Det(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (x.ndim() < 2) return n.Invalid("the input must have at least 2 dims");
  if (x.ndim() == 2) return std::vector<Var>{det(x)};
  return std::vector<Var>{blockwise(std::make_shared<kiln::Det>(), "(m,m)->()", {x})};
}

// One term of an equation: its labels, an ellipsis standing for kEllipsis entries.
constexpr char kEllipsis = '.';

absl::StatusOr<std::string> ParseTerm(const ImportNode& n, absl::string_view term) {
  std::string labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (ellipsis || term.substr(i, 3) != "...") return n.Invalid("a malformed ellipsis");
      ellipsis = true;
      labels.push_back(kEllipsis);
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      labels.push_back(c);
    } else {
      return n.Invalid(absl::StrCat("the equation holds '", std::string(1, c), "'"));
    }
  }
  return labels;
}

// An operand's labels with its ellipsis spelled out as `ell` labels, the ellipsis dims counted
// from the right so that they broadcast: '0' + k for the k-th of `total` ellipsis dims.
std::vector<char> Spelled(const std::string& term, int ell, int total) {
  std::vector<char> out;
  for (char c : term) {
    if (c != kEllipsis) {
      out.push_back(c);
      continue;
    }
    for (int k = total - ell; k < total; ++k) out.push_back(static_cast<char>('0' + k));
  }
  return out;
}

// The positions of the first label found twice in `labels`.
std::optional<std::pair<int, int>> FirstRepeat(const std::vector<char>& labels) {
  for (size_t a = 0; a < labels.size(); ++a) {
    for (size_t b = a + 1; b < labels.size(); ++b) {
      if (labels[a] == labels[b]) return std::pair<int, int>(static_cast<int>(a), static_cast<int>(b));
    }
  }
  return std::nullopt;
}

Outs Einsum(const ImportNode& n) {
  std::string equation = n.String("equation", "");
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (absl::string_view t : absl::StrSplit(lhs, ',')) {
    absl::StatusOr<std::string> labels = ParseTerm(n, t);
    if (!labels.ok()) return labels.status();
    terms.push_back(*labels);
  }
  if (static_cast<int>(terms.size()) != n.num_inputs()) {
    return n.Invalid(absl::StrCat("the equation has ", terms.size(), " operands, the node ",
                                  n.num_inputs()));
  }
  // The ellipsis dims of each operand, and of all (they broadcast from the right).
  std::vector<int> ell(terms.size(), 0);
  int total_ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Var x = n.in(static_cast<int>(i));
    if (!x.ok()) return x.status();
    const int named = static_cast<int>(std::count_if(terms[i].begin(), terms[i].end(),
                                                     [](char c) { return c != kEllipsis; }));
    const bool has_ellipsis = terms[i].find(kEllipsis) != std::string::npos;
    ell[i] = x.ndim() - named;
    if (ell[i] < 0 || (!has_ellipsis && ell[i] != 0)) {
      return n.Invalid(absl::StrCat("operand ", i, " has rank ", x.ndim(), " for '", terms[i], "'"));
    }
    total_ell = std::max(total_ell, ell[i]);
  }
  if (total_ell > 10) return n.Unimplemented("more than 10 ellipsis dims");
  // The axes of the product: ellipsis dims, then each label in order of appearance.
  std::vector<char> axes;
  std::map<char, int> count;
  for (int k = 0; k < total_ell; ++k) axes.push_back(static_cast<char>('0' + k));
  for (size_t i = 0; i < terms.size(); ++i) {
    for (char c : Spelled(terms[i], ell[i], total_ell)) {
      if (c >= '0' && c <= '9') continue;
      if (count[c]++ == 0) axes.push_back(c);
    }
  }
  // The output: given, or (implicit mode) the ellipsis dims then the labels used once, sorted.
  std::vector<char> out;
  if (arrow != std::string::npos) {
    absl::StatusOr<std::string> labels = ParseTerm(n, equation.substr(arrow + 2));
    if (!labels.ok()) return labels.status();
    out = Spelled(*labels, total_ell, total_ell);
  } else {
    for (int k = 0; k < total_ell; ++k) out.push_back(static_cast<char>('0' + k));
    for (const auto& [c, times] : count) {
      if (times == 1) out.push_back(c);
    }
  }
  Var product;
  for (size_t i = 0; i < terms.size(); ++i) {
    Var x = n.in(static_cast<int>(i));
    std::vector<char> labels = Spelled(terms[i], ell[i], total_ell);
    // A label repeated in one operand reads its diagonal (moved to the last axis).
    while (const std::optional<std::pair<int, int>> twice = FirstRepeat(labels)) {
      const auto [a, b] = *twice;
      x = diagonal(x, 0, a, b);
      const char c = labels[a];
      labels.erase(labels.begin() + b);
      labels.erase(labels.begin() + a);
      labels.push_back(c);
    }
    std::vector<int> order;
    for (char c : axes) {
      const auto at = std::find(labels.begin(), labels.end(), c);
      order.push_back(at == labels.end() ? kX : static_cast<int>(at - labels.begin()));
    }
    x = dimshuffle(x, order);
    product = i == 0 ? x : product * x;
  }
  std::vector<int> summed, kept_order;
  std::vector<char> kept;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (std::find(out.begin(), out.end(), axes[a]) == out.end()) {
      summed.push_back(static_cast<int>(a));
    } else {
      kept.push_back(axes[a]);
    }
  }
  if (!summed.empty()) product = sum(product, Axes(summed));
  for (char c : out) {
    const auto at = std::find(kept.begin(), kept.end(), c);
    if (at == kept.end()) {
      return n.Invalid(absl::StrCat("output label '", std::string(1, c), "' is in no operand"));
    }
    kept_order.push_back(static_cast<int>(at - kept.begin()));
  }
  return std::vector<Var>{dimshuffle(product, kept_order)};
}

}  // namespace

void AddEinsumImporters(OpTable& t) {
  t["Det"] = Det;
  t["Einsum"] = Einsum;
}

}  // namespace kiln::onnx
