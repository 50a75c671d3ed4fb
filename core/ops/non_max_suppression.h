// ONNX's NonMaxSuppression (Aesara has none; the ONNX importer's, proto/onnx): per batch and
// class, the boxes kept by greedy non-maximum suppression.
#ifndef KILN_CORE_OPS_NON_MAX_SUPPRESSION_H_
#define KILN_CORE_OPS_NON_MAX_SUPPRESSION_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// center_point_box: boxes as (x_center, y_center, width, height) instead of two corners
// (y1, x1, y2, x2), in either order.
struct NonMaxSuppressionAttrs {
  bool center_point_box = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"center_point_box", &NonMaxSuppressionAttrs::center_point_box}};
  }
  absl::Status Check() const { return absl::OkStatus(); }
};

// NonMaxSuppression{center_point_box}(boxes (B, N, 4), scores (B, C, N), max_per_class,
// iou_threshold, score_threshold): the int64 rows (batch, class, box) selected, batch by batch,
// class by class, each class's in the order chosen: the boxes scoring above score_threshold,
// by descending score (ties: the lower index first), each kept unless its IoU with one kept
// before exceeds iou_threshold, at most max_per_class of them (ONNX Runtime's rules). The
// number of rows is known when the op runs. Not differentiable.
class NonMaxSuppression final : public DeclaredOp<NonMaxSuppression, NonMaxSuppressionAttrs> {
 public:
  KILN_DECLARED_OP("NonMaxSuppression")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override {
    return std::vector<std::vector<bool>>(node.num_inputs(), {false});
  }
};

// NonMaxSuppression(center_point_box)(boxes, scores, max_per_class, iou_threshold,
// score_threshold): the selected indices.
Var non_max_suppression(const Var& boxes, const Var& scores, const Var& max_per_class,
                        const Var& iou_threshold, const Var& score_threshold,
                        bool center_point_box = false);

}  // namespace kiln

#endif  // KILN_CORE_OPS_NON_MAX_SUPPRESSION_H_
