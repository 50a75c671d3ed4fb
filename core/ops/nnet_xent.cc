#include "core/ops/nnet_xent.h"

#include <cmath>
#include <span>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/ops/sleef_kernels.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(SoftmaxWithBias);
KILN_REGISTER_OP(CrossentropySoftmaxArgmax1HotWithBias);
KILN_REGISTER_OP(CrossentropySoftmax1HotWithBiasDx);
KILN_REGISTER_OP(CrossentropyCategorical1Hot);
KILN_REGISTER_OP(CrossentropyCategorical1HotGrad);

namespace {

// Input i as a tensor of rank `ndim` (or rank at most 1 when `ndim` is -1) of a float dtype
// (integer when `integer`), or Aesara's complaint `what` with the input's name and type.
absl::StatusOr<const TensorType*> Expect(const Op& op, const std::vector<VariablePtr>& in, size_t i,
                                         const char* name, int ndim, bool integer,
                                         const char* what) {
  const TensorType* t = in[i]->tensor_type();
  const bool rank_ok = t != nullptr && (ndim >= 0 ? t->ndim() == ndim : t->ndim() <= 1);
  if (!rank_ok || (integer ? !IsInteger(t->dtype()) : !IsFloat(t->dtype()))) {
    return Invalid(op, absl::StrCat("input ", i, " (", name, ") has type ",
                                    in[i]->type()->ToString(), ": ", what));
  }
  return t;
}

absl::Status ExpectCount(const Op& op, const std::vector<VariablePtr>& in, size_t n,
                         const char* names) {
  if (in.size() == n) return absl::OkStatus();
  return Invalid(op, absl::StrCat("expects ", n, " inputs (", names, ")"));
}

// A contiguous float64 copy of a tensor, from the call's budget (the kernels compute in double
// precision).
Tensor Doubles(const Tensor& t) { return t.AsType(DType::kFloat64); }

// The labels, as int64, each checked to be a column of a matrix with `cols` columns.
absl::StatusOr<std::vector<int64_t>> Labels(const Op& op, const Tensor& t, int64_t cols) {
  const Tensor l = t.AsType(DType::kInt64).Contiguous();
  std::vector<int64_t> v(l.data<int64_t>(), l.data<int64_t>() + l.size());
  for (int64_t y : v) {
    if (y < 0 || y >= cols) {
      return Invalid(op, absl::StrCat("y_i value out of bounds: ", y, " is not a column index ",
                                      "of a matrix of ", cols, " columns"));
    }
  }
  return v;
}

// A float64 tensor of `shape` for a kernel to fill, its size checked as an output of `dtype`.
absl::StatusOr<Tensor> DoublesOf(const Op& op, DType dtype, const Shape& shape) {
  RETURN_IF_ERROR(CheckOutputShape(op, shape, dtype));
  return Tensor::Empty(DType::kFloat64, shape);
}

// The computed doubles as the output's dtype.
Tensor AsOutput(Tensor values, DType dtype) {
  return dtype == DType::kFloat64 ? values : values.AsType(dtype);
}

// The row-wise softmax of x + b (rows x cols, b one entry per column) into sm, as Aesara's
// perform computes it: exp(row - max) times the reciprocal of the sum. Returns each row's
// argmax, its maximum and the log of its sum for the cross-entropy.
struct RowStats {
  int64_t argmax;
  double max, log_sum;
};
absl::StatusOr<std::vector<RowStats>> SoftmaxRows(const double* x, const double* b, int64_t rows,
                                                  int64_t cols, double* sm) {
  std::vector<RowStats> stats(rows);
  InterruptPoller poller;
  for (int64_t i = 0; i < rows; ++i) {
    const double* xi = x + i * cols;
    double* si = sm + i * cols;
    int64_t am = 0;
    for (int64_t j = 0; j < cols; ++j) {
      si[j] = xi[j] + b[j];
      // numpy.argmax: the first maximum, or the first NaN.
      if (!std::isnan(si[am]) && (std::isnan(si[j]) || si[j] > si[am])) am = j;
    }
    const double m = cols > 0 ? si[am] : 0.0;
    double total = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      si[j] = std::exp(si[j] - m);
      total += si[j];
    }
    const double scale = 1.0 / total;
    for (int64_t j = 0; j < cols; ++j) si[j] *= scale;
    stats[i] = {am, m, std::log(total)};
    RETURN_IF_ERROR(poller.Tick(cols));
  }
  return stats;
}

// SoftmaxRows' softmax without its statistics, for contiguous float64 x and b, in three passes
// over sm: x + b less each row's maximum (NaN in a row with a NaN, as in SoftmaxRows), exp of the
// whole matrix at once on SLEEF's vectors (within 1 ULP of std::exp), each row times the
// reciprocal of its sum (added in order, as SoftmaxRows adds it).
absl::Status SoftmaxBiasRows(const double* x, const double* b, int64_t rows, int64_t cols,
                             double* sm) {
  InterruptPoller poller;
  for (int64_t i = 0; i < rows; ++i) {
    const double* xi = x + i * cols;
    double* si = sm + i * cols;
    // The maximum, a NaN when the row has one (without branches: whichever NaN, exp gives NaN).
    double m = cols > 0 ? xi[0] + b[0] : 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      si[j] = xi[j] + b[j];
      m = m > si[j] || m != m ? m : si[j];
    }
    for (int64_t j = 0; j < cols; ++j) si[j] -= m;
    RETURN_IF_ERROR(poller.Tick(cols));
  }
  sleef::Map(ScalarOpKind::kExp, sm, sm, rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    double* si = sm + i * cols;
    double total = 0.0;
    for (int64_t j = 0; j < cols; ++j) total += si[j];
    const double scale = 1.0 / total;
    for (int64_t j = 0; j < cols; ++j) si[j] *= scale;
  }
  return absl::OkStatus();
}

// x's rows and columns, and b's length checked against the columns.
absl::Status CheckBias(const Op& op, const Tensor& x, const Tensor& b) {
  if (b.shape()[0] != x.shape()[1]) {
    return Invalid(op, absl::StrCat("b must have same number of columns as x: b has shape ",
                                    ShapeToString(b.shape()), " and x ", ShapeToString(x.shape())));
  }
  return absl::OkStatus();
}

// The type of a vector with one entry per row of `rows_like` (its first dim kept when 1).
TypePtr RowVectorType(DType dtype, const TensorType& like) {
  return TensorType::Make(dtype, StaticShape{like.shape()[0] == 1 ? StaticDim(1) : std::nullopt});
}

// The flat indices of (i, y_idx[i]) in a matrix shaped like m.
Var LabelPositions(const Var& m, const Var& y_idx) {
  return arange(shape_i(y_idx, 0)) * shape_i(m, 1) + cast(y_idx, DType::kInt64);
}

}  // namespace

// --- SoftmaxWithBias --------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> SoftmaxWithBias::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectCount(*this, inputs, 2, "x, b"));
  ASSIGN_OR_RETURN(const TensorType* x,
                   Expect(*this, inputs, 0, "x", 2, false, "x must be 2-d tensor of floats"));
  RETURN_IF_ERROR(
      Expect(*this, inputs, 1, "b", 1, false, "b must be 1-d tensor of floats").status());
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(x->dtype(), x->shape())});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> SoftmaxWithBias::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status SoftmaxWithBias::Perform(const Apply& node, std::span<const Tensor> inputs,
                                      std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  RETURN_IF_ERROR(CheckBias(*this, x, inputs[1]));
  ASSIGN_OR_RETURN(Tensor sm, DoublesOf(*this, x.dtype(), x.shape()));
  const Tensor& b = inputs[1];
  if (x.dtype() == DType::kFloat64 && b.dtype() == DType::kFloat64 && x.is_contiguous() &&
      b.is_contiguous()) {
    // No float64 copies of x and b, and no row statistics.
    RETURN_IF_ERROR(SoftmaxBiasRows(x.data<double>(), b.data<double>(), x.shape()[0],
                                    x.shape()[1], sm.data<double>()));
    outputs[0] = std::move(sm);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(SoftmaxRows(Doubles(x).data<double>(), Doubles(inputs[1]).data<double>(),
                              x.shape()[0], x.shape()[1], sm.data<double>())
                      .status());
  outputs[0] = AsOutput(std::move(sm), x.dtype());
  return absl::OkStatus();
}

// Aesara's: dx = SoftmaxGrad(g, sm) = (g - sum(g * sm, rows)) * sm, db = sum(dx, 0).
std::vector<Var> SoftmaxWithBias::LOp(const Apply& node, const std::vector<Var>& g) const {
  if (IsDisconnected(*g[0])) return {disconnected_type(), disconnected_type()};
  const Var sm(node.output(0));
  const Var dx = (g[0] - sum(g[0] * sm, Axes(1), /*keepdims=*/true)) * sm;
  return {dx, sum(dx, Axes(0))};
}

// --- CrossentropySoftmaxArgmax1HotWithBias ----------------------------------------------------

absl::StatusOr<ApplyPtr> CrossentropySoftmaxArgmax1HotWithBias::MakeNode(
    std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectCount(*this, inputs, 3, "x, b, y_idx"));
  ASSIGN_OR_RETURN(const TensorType* x,
                   Expect(*this, inputs, 0, "x", 2, false, "x must be 2-d tensor of floats"));
  RETURN_IF_ERROR(
      Expect(*this, inputs, 1, "b", 1, false, "b must be 1-d tensor of floats").status());
  ASSIGN_OR_RETURN(const TensorType* y, Expect(*this, inputs, 2, "y_idx", 1, true,
                                               "y_idx must be 1-d tensor of [u]ints"));
  return Apply::Make(self(), std::move(inputs),
                     {RowVectorType(x->dtype(), *y), TensorType::Make(x->dtype(), x->shape()),
                      TensorType::Make(y->dtype(), y->shape())});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>>
CrossentropySoftmaxArgmax1HotWithBias::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{{in[0][0]}, in[0], in[2]};
}

absl::Status CrossentropySoftmaxArgmax1HotWithBias::Perform(const Apply& node,
                                                            std::span<const Tensor> inputs,
                                                            std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  RETURN_IF_ERROR(CheckBias(*this, x, inputs[1]));
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  if (inputs[2].shape()[0] != rows) {
    return Invalid(
        *this, absl::StrCat("y_idx must have same number of rows as x: y_idx has "
                            "shape ",
                            ShapeToString(inputs[2].shape()), " and x ", ShapeToString(x.shape())));
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> y, Labels(*this, inputs[2], cols));
  const DType nll_dtype = node.output(0)->tensor_type()->dtype();
  const Tensor x64 = Doubles(x), b64 = Doubles(inputs[1]);
  const double *xv = x64.data<double>(), *b = b64.data<double>();
  ASSIGN_OR_RETURN(Tensor sm, DoublesOf(*this, x.dtype(), x.shape()));
  ASSIGN_OR_RETURN(const std::vector<RowStats> stats,
                   SoftmaxRows(xv, b, rows, cols, sm.data<double>()));
  ASSIGN_OR_RETURN(Tensor nll, DoublesOf(*this, nll_dtype, {rows}));
  Tensor am = Tensor::Empty(DType::kInt64, {rows});
  for (int64_t i = 0; i < rows; ++i) {
    // -log(exp(row[y] - m) / sum) = -row[y] + m + log(sum)
    nll.data<double>()[i] = -(xv[i * cols + y[i]] + b[y[i]]) + stats[i].max + stats[i].log_sum;
    am.data<int64_t>()[i] = stats[i].argmax;
  }
  outputs[0] = AsOutput(std::move(nll), nll_dtype);
  outputs[1] = AsOutput(std::move(sm), x.dtype());
  outputs[2] = inputs[2].dtype() == DType::kInt64 ? std::move(am) : am.AsType(inputs[2].dtype());
  return absl::OkStatus();
}

// Aesara's: the nll's gradient through CrossentropySoftmax1HotWithBiasDx, the softmax's as
// SoftmaxWithBias's, the argmax's zeros; summed over the outputs that have one.
std::vector<Var> CrossentropySoftmaxArgmax1HotWithBias::LOp(const Apply& node,
                                                            const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]), b(node.inputs()[1]), y_idx(node.inputs()[2]);
  std::vector<Var> dx, db, dy_idx;
  if (!IsDisconnected(*g[0])) {
    const Var d = crossentropy_softmax_1hot_with_bias_dx(g[0], Var(node.output(1)), y_idx);
    dx.push_back(d);
    db.push_back(sum(d, Axes(0)));
  }
  if (!IsDisconnected(*g[1])) {
    const Var sm = softmax_with_bias(x, b);
    const Var d = (g[1] - sum(g[1] * sm, Axes(1), /*keepdims=*/true)) * sm;
    dx.push_back(d);
    db.push_back(sum(d, Axes(0)));
  }
  if (!IsDisconnected(*g[2])) {
    dx.push_back(zeros_like(x));
    db.push_back(zeros_like(b));
    dy_idx.push_back(zeros_like(y_idx));
  }
  auto total = [](const std::vector<Var>& terms) -> Var {
    if (terms.empty()) return disconnected_type();
    Var r = terms[0];
    for (size_t i = 1; i < terms.size(); ++i) r = r + terms[i];
    return r;
  };
  return {total(dx), total(db), total(dy_idx)};
}

// --- CrossentropySoftmax1HotWithBiasDx --------------------------------------------------------

absl::StatusOr<ApplyPtr> CrossentropySoftmax1HotWithBiasDx::MakeNode(
    std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectCount(*this, inputs, 3, "dy, sm, y_idx"));
  RETURN_IF_ERROR(
      Expect(*this, inputs, 0, "dy", -1, false, "dy must be {0,1}-d tensor of floats").status());
  ASSIGN_OR_RETURN(const TensorType* sm,
                   Expect(*this, inputs, 1, "sm", 2, false, "sm must be 2-d tensor of floats"));
  RETURN_IF_ERROR(
      Expect(*this, inputs, 2, "y_idx", 1, true, "y_idx must be 1-d tensor of [u]ints").status());
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(sm->dtype(), sm->shape())});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> CrossentropySoftmax1HotWithBiasDx::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[1]};
}

absl::Status CrossentropySoftmax1HotWithBiasDx::Perform(const Apply&,
                                                        std::span<const Tensor> inputs,
                                                        std::vector<Tensor>& outputs) const {
  const Tensor& sm = inputs[1];
  const int64_t rows = sm.shape()[0], cols = sm.shape()[1];
  const Tensor dy64 = Doubles(inputs[0]);
  const double* dy = dy64.data<double>();
  if (dy64.size() != 1 && dy64.size() != rows) {
    return Invalid(*this, absl::StrCat("dy has shape ", ShapeToString(inputs[0].shape()),
                                       " but sm has ", rows, " rows"));
  }
  if (inputs[2].shape()[0] < rows) {
    return Invalid(*this, absl::StrCat("y_idx has shape ", ShapeToString(inputs[2].shape()),
                                       " but sm has ", rows, " rows"));
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> y, Labels(*this, inputs[2], cols));
  Tensor dx64 = Doubles(sm);  // a copy, scaled in place below
  double* dx = dx64.data<double>();
  for (int64_t i = 0; i < rows; ++i) {
    const double dyi = dy[dy64.size() == 1 ? 0 : i];
    for (int64_t j = 0; j < cols; ++j) dx[i * cols + j] *= dyi;
    dx[i * cols + y[i]] -= dyi;
  }
  outputs[0] = AsOutput(std::move(dx64), sm.dtype());
  return absl::OkStatus();
}

// Aesara's: g_dy = sum(g_dx * (sm with -1 added at each row's label), rows), g_sm = dy * g_dx
// (dy as a column); y_idx's is not implemented.
std::vector<Var> CrossentropySoftmax1HotWithBiasDx::LOp(const Apply& node,
                                                        const std::vector<Var>& g) const {
  const Var dy(node.inputs()[0]), sm(node.inputs()[1]), y_idx(node.inputs()[2]);
  const Var shifted =
      reshape(inc_subtensor(take(flatten(sm), LabelPositions(sm, y_idx)),
                            alloc(scalar_constant(-1.0, sm.dtype()), {shape_i(y_idx, 0)})),
              shape(sm));
  Var g_dy = sum(g[0] * shifted, Axes(1));
  if (dy.ndim() == 0) g_dy = sum(g_dy);
  const Var g_sm = (dy.ndim() == 0 ? dy : dimshuffle(dy, {0, kX})) * g[0];
  return {g_dy, g_sm, grad_not_implemented(Name(), 2, y_idx.ptr())};
}

// --- CrossentropyCategorical1Hot --------------------------------------------------------------

absl::StatusOr<ApplyPtr> CrossentropyCategorical1Hot::MakeNode(
    std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectCount(*this, inputs, 2, "coding_dist, true_one_of_n"));
  ASSIGN_OR_RETURN(const TensorType* coding,
                   Expect(*this, inputs, 0, "coding_dist", 2, false,
                          "Matrix of floats required for argument `coding_dist`"));
  RETURN_IF_ERROR(Expect(*this, inputs, 1, "true_one_of_n", 1, true,
                         "Integer vector required for argument `true_one_of_n`")
                      .status());
  return Apply::Make(self(), std::move(inputs),
                     {TensorType::Make(coding->dtype(), StaticShape{std::nullopt})});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> CrossentropyCategorical1Hot::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{{in[0][0]}};
}

absl::Status CrossentropyCategorical1Hot::Perform(const Apply&, std::span<const Tensor> inputs,
                                                  std::vector<Tensor>& outputs) const {
  const Tensor& coding = inputs[0];
  const int64_t rows = coding.shape()[0], cols = coding.shape()[1];
  if (inputs[1].shape()[0] < rows) {
    return Invalid(*this, absl::StrCat("true_one_of_n has shape ", ShapeToString(inputs[1].shape()),
                                       " but coding_dist has ", rows, " rows"));
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> y, Labels(*this, inputs[1], cols));
  const Tensor c64 = Doubles(coding);
  const double* c = c64.data<double>();
  ASSIGN_OR_RETURN(Tensor out, DoublesOf(*this, coding.dtype(), {rows}));
  for (int64_t i = 0; i < rows; ++i) out.data<double>()[i] = -std::log(c[i * cols + y[i]]);
  outputs[0] = AsOutput(std::move(out), coding.dtype());
  return absl::OkStatus();
}

std::vector<Var> CrossentropyCategorical1Hot::LOp(const Apply& node,
                                                  const std::vector<Var>& g) const {
  const Var coding(node.inputs()[0]), one_of_n(node.inputs()[1]);
  return {crossentropy_categorical_1hot_grad(g[0], coding, one_of_n),
          grad_not_implemented(Name(), 1, one_of_n.ptr())};
}

// --- CrossentropyCategorical1HotGrad ----------------------------------------------------------

absl::StatusOr<ApplyPtr> CrossentropyCategorical1HotGrad::MakeNode(
    std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectCount(*this, inputs, 3, "g_y, coding_dist, true_one_of_n"));
  RETURN_IF_ERROR(
      Expect(*this, inputs, 0, "g_y", 1, false, "a vector of floats is needed").status());
  ASSIGN_OR_RETURN(const TensorType* coding, Expect(*this, inputs, 1, "coding_dist", 2, false,
                                                    "a matrix of floats is needed"));
  RETURN_IF_ERROR(
      Expect(*this, inputs, 2, "true_one_of_n", 1, true, "an integer vector is needed").status());
  return Apply::Make(self(), std::move(inputs),
                     {TensorType::Make(coding->dtype(), coding->shape())});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> CrossentropyCategorical1HotGrad::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[1]};
}

absl::Status CrossentropyCategorical1HotGrad::Perform(const Apply&, std::span<const Tensor> inputs,
                                                      std::vector<Tensor>& outputs) const {
  const Tensor& coding = inputs[1];
  const int64_t rows = coding.shape()[0], cols = coding.shape()[1];
  const int64_t n = inputs[0].shape()[0];
  if (n > rows || inputs[2].shape()[0] < n) {
    return Invalid(*this, absl::StrCat("g_y has shape ", ShapeToString(inputs[0].shape()),
                                       ", coding_dist ", ShapeToString(coding.shape()),
                                       " and true_one_of_n ", ShapeToString(inputs[2].shape()),
                                       ": one label and one row per entry of g_y are needed"));
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> y, Labels(*this, inputs[2], cols));
  const Tensor g64 = Doubles(inputs[0]), c64 = Doubles(coding);
  const double *g = g64.data<double>(), *c = c64.data<double>();
  Tensor out = Tensor::Zeros(DType::kFloat64, coding.shape());  // coding's shape: bounded
  for (int64_t i = 0; i < n; ++i) out.data<double>()[i * cols + y[i]] = -g[i] / c[i * cols + y[i]];
  outputs[0] = AsOutput(std::move(out), coding.dtype());
  return absl::OkStatus();
}

// Aesara defines no gradient for this op.
std::vector<Var> CrossentropyCategorical1HotGrad::LOp(const Apply& node,
                                                      const std::vector<Var>&) const {
  std::vector<Var> r;
  for (int i = 0; i < 3; ++i) r.push_back(grad_not_implemented(Name(), i, node.inputs()[i]));
  return r;
}

// --- builders ---------------------------------------------------------------------------------

namespace {
template <typename T>
OpPtr Make() {
  return std::make_shared<T>();
}
// All outputs of `op` applied to `inputs`, or the error in each.
std::vector<Var> ApplyAll(const OpPtr& op, const std::vector<Var>& inputs, size_t n) {
  std::vector<VariablePtr> in;
  for (const Var& v : inputs) {
    if (!v.ok()) return std::vector<Var>(n, v);
    in.push_back(v.ptr());
  }
  absl::StatusOr<ApplyPtr> node = op->MakeNode(std::move(in));
  if (!node.ok()) return std::vector<Var>(n, Var(node.status()));
  std::vector<Var> out;
  for (size_t i = 0; i < n; ++i) out.push_back(Var((*node)->output(i)));
  return out;
}
}  // namespace

Var softmax_with_bias(const Var& x, const Var& b) {
  return ApplyOp(Make<SoftmaxWithBias>(), {x, b});
}

std::vector<Var> crossentropy_softmax_argmax_1hot_with_bias(const Var& x, const Var& b,
                                                            const Var& y_idx) {
  return ApplyAll(Make<CrossentropySoftmaxArgmax1HotWithBias>(), {x, b, y_idx}, 3);
}

std::vector<Var> crossentropy_softmax_1hot_with_bias(const Var& x, const Var& b, const Var& y_idx) {
  std::vector<Var> r = crossentropy_softmax_argmax_1hot_with_bias(x, b, y_idx);
  r.pop_back();
  return r;
}

std::vector<Var> crossentropy_softmax_1hot(const Var& x, const Var& y_idx) {
  if (!x.ok()) return {x, x};
  return crossentropy_softmax_1hot_with_bias(x, zeros_like(subtensor(x, {0, Slice{}})), y_idx);
}

Var crossentropy_softmax_1hot_with_bias_dx(const Var& dy, const Var& sm, const Var& y_idx) {
  return ApplyOp(Make<CrossentropySoftmax1HotWithBiasDx>(), {dy, sm, y_idx});
}

Var crossentropy_categorical_1hot(const Var& coding_dist, const Var& true_one_of_n) {
  return ApplyOp(Make<CrossentropyCategorical1Hot>(), {coding_dist, true_one_of_n});
}

Var crossentropy_categorical_1hot_grad(const Var& g_y, const Var& coding_dist,
                                       const Var& true_one_of_n) {
  return ApplyOp(Make<CrossentropyCategorical1HotGrad>(), {g_y, coding_dist, true_one_of_n});
}

}  // namespace kiln
