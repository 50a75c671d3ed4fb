// NonMaxSuppression on boxes worked out by hand (the ONNX conformance runner checks ONNX's own
// cases through the importer): the greedy order, both box formats, the three limits, its type,
// and a mismatch of shapes named in the error.
#include "core/ops/non_max_suppression.h"

#include <gtest/gtest.h>

#include "core/compile/function.h"
#include "core/kiln.h"

namespace kiln {
namespace {

// The selected rows of one call, flattened.
std::vector<int64_t> Selected(const Tensor& boxes, const Tensor& scores, int64_t most,
                              float iou, float score, bool center = false) {
  const Var b = tensor(DType::kFloat32, {std::nullopt, std::nullopt, std::nullopt});
  const Var s = tensor(DType::kFloat32, {std::nullopt, std::nullopt, std::nullopt});
  const Var y = non_max_suppression(b, s, constant(most), scalar_constant(iou, DType::kFloat32),
                                    scalar_constant(score, DType::kFloat32), center);
  absl::StatusOr<Function> f = function({b, s}, {y});
  EXPECT_TRUE(f.ok()) << f.status();
  absl::StatusOr<std::vector<Tensor>> out = (*f)({boxes, scores});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  const Tensor& r = (*out)[0];
  EXPECT_EQ(r.ndim(), 2);
  return std::vector<int64_t>(r.data<int64_t>(), r.data<int64_t>() + r.size());
}

// Box 0 and box 1 overlap with IoU 0.6 (1 x 1 squares offset by 0.25); box 2 is apart.
const Tensor kBoxes = *Tensor::Of<float>(DType::kFloat32, {1, 3, 4},
                                         {0, 0, 1, 1, 0.25f, 0, 1.25f, 1, 5, 5, 6, 6});

TEST(NonMaxSuppressionTest, KeepsTheBestOfOverlappingBoxes) {
  const Tensor scores = *Tensor::Of<float>(DType::kFloat32, {1, 1, 3}, {0.7f, 0.9f, 0.8f});
  // By score: 1, 2, then 0, which box 1 suppresses (IoU 0.6 > 0.5).
  EXPECT_EQ(Selected(kBoxes, scores, 10, 0.5f, 0.0f),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // Above 0.6 nothing overlaps enough; at most 2 per class; scores above 0.75 only.
  EXPECT_EQ(Selected(kBoxes, scores, 10, 0.65f, 0.0f),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(Selected(kBoxes, scores, 2, 0.65f, 0.0f), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  EXPECT_EQ(Selected(kBoxes, scores, 10, 0.65f, 0.75f), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  EXPECT_TRUE(Selected(kBoxes, scores, 0, 0.5f, 0.0f).empty());
}

TEST(NonMaxSuppressionTest, CenterPointBoxesAndFlippedCorners) {
  // The same boxes as centres and sizes; and box 1 with its corners given high first.
  const Tensor centres = *Tensor::Of<float>(DType::kFloat32, {1, 3, 4},
                                            {0.5f, 0.5f, 1, 1, 0.5f, 0.75f, 1, 1, 5.5f, 5.5f, 1, 1});
  const Tensor flipped = *Tensor::Of<float>(DType::kFloat32, {1, 3, 4},
                                            {0, 0, 1, 1, 1.25f, 1, 0.25f, 0, 5, 5, 6, 6});
  const Tensor scores = *Tensor::Of<float>(DType::kFloat32, {1, 1, 3}, {0.7f, 0.9f, 0.8f});
  const std::vector<int64_t> want{0, 0, 1, 0, 0, 2};
  EXPECT_EQ(Selected(centres, scores, 10, 0.5f, 0.0f, /*center=*/true), want);
  EXPECT_EQ(Selected(flipped, scores, 10, 0.5f, 0.0f), want);
}

TEST(NonMaxSuppressionTest, TypeAndMismatchedShapes) {
  const Var y = non_max_suppression(ftensor3(), ftensor3(), lscalar(), fscalar(), fscalar());
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->type()->ToString(), "TensorType(int64, (?, 3))");
  EXPECT_FALSE(non_max_suppression(fmatrix(), ftensor3(), lscalar(), fscalar(), fscalar()).ok());
  const Var b = ftensor3(), s = ftensor3();
  absl::StatusOr<Function> f = function(
      {b, s}, {non_max_suppression(b, s, constant(int64_t{5}), constant(0.5f),
                                   constant(0.0f))});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor scores = *Tensor::Of<float>(DType::kFloat32, {1, 1, 2}, {0.5f, 0.6f});
  const absl::Status bad = (*f)({kBoxes, scores}).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_NE(bad.message().find("(1, 3, 4)"), std::string::npos) << bad;
}

}  // namespace
}  // namespace kiln
