#include "core/ops/non_max_suppression.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(NonMaxSuppression);

namespace {

// A box as its low and high corners.
struct Box {
  double y_lo, x_lo, y_hi, x_hi;
  double Area() const { return (y_hi - y_lo) * (x_hi - x_lo); }
};

Box BoxAt(const double* b, bool center_point_box) {
  if (center_point_box) {  // (x_center, y_center, width, height)
    return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// Whether `b` overlaps `kept` by more than the threshold (a box of no area overlaps nothing).
bool Suppresses(const Box& kept, const Box& b, double iou_threshold) {
  const double ih = std::min(kept.y_hi, b.y_hi) - std::max(kept.y_lo, b.y_lo);
  const double iw = std::min(kept.x_hi, b.x_hi) - std::max(kept.x_lo, b.x_lo);
  if (ih <= 0 || iw <= 0) return false;
  const double a = kept.Area(), c = b.Area(), inter = ih * iw, uni = a + c - inter;
  if (a <= 0 || c <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

// The scalar input i as a double (its first element: ONNX gives 1-element tensors).
absl::StatusOr<double> ScalarOf(const Op& op, const Tensor& t, int i) {
  if (t.size() < 1) return Invalid(op, absl::StrCat("input ", i, " is empty"));
  return t.ElementAsDouble(0);
}

}  // namespace

absl::StatusOr<ApplyPtr> NonMaxSuppression::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 5) {
    return Invalid(*this,
                   "expects 5 inputs (boxes, scores, max_per_class, iou_threshold, "
                   "score_threshold)");
  }
  ASSIGN_OR_RETURN(const TensorType* boxes, ExpectTensor(*this, inputs, 0, 3, false, "boxes (B, N, 4)"));
  ASSIGN_OR_RETURN(const TensorType* scores, ExpectTensor(*this, inputs, 1, 3, false, "scores (B, C, N)"));
  if (!IsFloat(boxes->dtype()) || !IsFloat(scores->dtype())) {
    return Invalid(*this, absl::StrCat("boxes (", boxes->ToString(), ") and scores (",
                                       scores->ToString(), ") must be floats"));
  }
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 2, -1, true, "an integer (max_per_class)").status());
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 3, -1, false, "a number (iou_threshold)").status());
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 4, -1, false, "a number (score_threshold)").status());
  return Apply::Make(self(), std::move(inputs),
                     {TensorType::Make(DType::kInt64, StaticShape{std::nullopt, 3})});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> NonMaxSuppression::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>&) const {
  return std::vector<ShapeVars>{{DimOf(node.output(0), 0), ConstDim(3)}};
}

absl::Status NonMaxSuppression::Perform(const Apply&, std::span<const Tensor> inputs,
                                        std::vector<Tensor>& outputs) const {
  const Tensor boxes = inputs[0].AsType(DType::kFloat64).Contiguous();
  const Tensor scores = inputs[1].AsType(DType::kFloat64).Contiguous();
  const Shape& bs = boxes.shape();
  const Shape& ss = scores.shape();
  if (bs[2] != 4 || ss[0] != bs[0] || ss[2] != bs[1]) {
    return Invalid(*this, absl::StrCat("boxes of shape ", ShapeToString(bs), " and scores of shape ",
                                       ShapeToString(ss), " do not match (B, N, 4) and (B, C, N)"));
  }
  ASSIGN_OR_RETURN(const double most, ScalarOf(*this, inputs[2], 2));
  ASSIGN_OR_RETURN(const double iou_threshold, ScalarOf(*this, inputs[3], 3));
  ASSIGN_OR_RETURN(const double score_threshold, ScalarOf(*this, inputs[4], 4));
  const int64_t batches = bs[0], n = bs[1], classes = ss[1];
  const int64_t per_class = std::max<int64_t>(0, static_cast<int64_t>(std::min<double>(most, n)));
  std::vector<std::array<int64_t, 3>> rows;
  std::vector<int64_t> order(n);
  std::vector<Box> kept;
  InterruptPoller poller;
  for (int64_t b = 0; b < batches && per_class > 0; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const double* s = scores.data<double>() + (b * classes + c) * n;
      order.clear();
      for (int64_t i = 0; i < n; ++i) {
        if (s[i] > score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      kept.clear();
      for (int64_t i : order) {
        const Box box = BoxAt(boxes.data<double>() + (b * n + i) * 4, attrs().center_point_box);
        bool suppressed = false;
        for (const Box& k : kept) suppressed = suppressed || Suppresses(k, box, iou_threshold);
        RETURN_IF_ERROR(poller.Tick(static_cast<int64_t>(kept.size()) + 1));
        if (suppressed) continue;
        kept.push_back(box);
        rows.push_back({b, c, i});
        if (static_cast<int64_t>(kept.size()) == per_class) break;
      }
    }
  }
  const int64_t count = static_cast<int64_t>(rows.size());
  RETURN_IF_ERROR(CheckOutputShape(*this, {count, 3}, DType::kInt64));
  Tensor out = Tensor::Empty(DType::kInt64, {count, 3});
  for (int64_t r = 0; r < count; ++r) std::copy(rows[r].begin(), rows[r].end(), out.data<int64_t>() + 3 * r);
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<Var> NonMaxSuppression::LOp(const Apply& node, const std::vector<Var>&) const {
  return std::vector<Var>(node.num_inputs(), disconnected_type());
}

Var non_max_suppression(const Var& boxes, const Var& scores, const Var& max_per_class,
                        const Var& iou_threshold, const Var& score_threshold,
                        bool center_point_box) {
  const OpPtr op = std::make_shared<NonMaxSuppression>(NonMaxSuppressionAttrs{center_point_box});
  return ApplyOp(op, {boxes, scores, max_per_class, iou_threshold, score_threshold});
}

}  // namespace kiln
