// Aesara's abstract convolution (aesara.tensor.nnet.abstract_conv): AbstractConv2d and
// AbstractConv3d, and the two gradients of each (wrt the inputs and wrt the weights), as one
// N-d implementation (conv_kernels.cc: im2col and OpenBLAS GEMM). Unshared convolution is
// refused.
#ifndef KILN_CORE_OPS_CONV_H_
#define KILN_CORE_OPS_CONV_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Aesara's border_mode: 'valid', 'full', 'half', or explicit padding: one (low, high) pair per
// spatial axis in `pads` (low0, high0, low1, high1...). Prints as Aesara does: an axis with equal
// pads as an int, an asymmetric one as a pair, all zero as 'valid'.
struct ConvBorder {
  enum Kind { kValid, kFull, kHalf, kPads };
  Kind kind = kValid;
  std::vector<int64_t> pads;  // only for kPads
  bool operator==(const ConvBorder&) const = default;
};

// A shape hint (Aesara's imshp, kshp): one optional size per dim, None where unknown.
struct ConvShapeHint {
  std::vector<std::optional<int64_t>> dims;
  bool operator==(const ConvShapeHint&) const = default;
};

namespace op_decl {
// border_mode travels as a string ('valid', 'full', 'half') or as the flat pads.
template <>
struct Codec<ConvBorder> {
  static AttrValue Encode(const ConvBorder& v);
  static absl::StatusOr<ConvBorder> Decode(const OpAttrs& a, const std::string& key);
  static std::string Repr(const ConvBorder& v);
};
// A hint travels as its sizes, -1 for None.
template <>
struct Codec<ConvShapeHint> {
  static AttrValue Encode(const ConvShapeHint& v);
  static absl::StatusOr<ConvShapeHint> Decode(const OpAttrs& a, const std::string& key);
  static std::string Repr(const ConvShapeHint& v);
};
}  // namespace op_decl

// Aesara's BaseAbstractConv.__props__, in its order.
struct ConvAttrs {
  int convdim = 2;
  ConvBorder border_mode;
  std::vector<int> subsample;
  bool filter_flip = true;
  ConvShapeHint imshp, kshp;
  std::vector<int> filter_dilation;
  int num_groups = 1;
  bool unshared = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"convdim", &ConvAttrs::convdim},
                      AttrField{"border_mode", &ConvAttrs::border_mode},
                      AttrField{"subsample", &ConvAttrs::subsample},
                      AttrField{"filter_flip", &ConvAttrs::filter_flip},
                      AttrField{"imshp", &ConvAttrs::imshp},
                      AttrField{"kshp", &ConvAttrs::kshp},
                      AttrField{"filter_dilation", &ConvAttrs::filter_dilation},
                      AttrField{"num_groups", &ConvAttrs::num_groups},
                      AttrField{"unshared", &ConvAttrs::unshared}};
  }
  // The attributes of a `dim`-d convolution are consistent (lengths, bounds, no unshared).
  absl::Status CheckFor(int dim) const;
};

// The attributes of a D-d convolution: Aesara's defaults (unit strides and dilations, unknown
// hints) and the check that convdim is D.
template <int D>
struct ConvAttrsOf : ConvAttrs {
  ConvAttrsOf() {
    convdim = D;
    subsample.assign(D, 1);
    filter_dilation.assign(D, 1);
    imshp.dims.assign(D + 2, std::nullopt);
    kshp.dims.assign(D + 2, std::nullopt);
  }
  absl::Status Check() const { return CheckFor(D); }
};

// The three computations of a convolution.
enum class ConvDirection { kForward, kGradInputs, kGradWeights };

// Aesara's class names.
constexpr absl::string_view ConvTypeName(ConvDirection dir, int dim) {
  if (dir == ConvDirection::kForward) return dim == 2 ? "AbstractConv2d" : "AbstractConv3d";
  if (dir == ConvDirection::kGradInputs) {
    return dim == 2 ? "AbstractConv2d_gradInputs" : "AbstractConv3d_gradInputs";
  }
  return dim == 2 ? "AbstractConv2d_gradWeights" : "AbstractConv3d_gradWeights";
}

// One op per direction and dimension. Forward: (img, kern) -> out. gradInputs: (kern, topgrad,
// the img's spatial shape) -> img's gradient. gradWeights: (img, topgrad, the kern's spatial
// shape) -> kern's gradient.
template <ConvDirection Dir, int D>
class ConvOp final : public DeclaredOp<ConvOp<Dir, D>, ConvAttrsOf<D>> {
 public:
  static constexpr absl::string_view kTypeName = ConvTypeName(Dir, D);
  using DeclaredOp<ConvOp<Dir, D>, ConvAttrsOf<D>>::DeclaredOp;
  KILN_OP_METHODS
  // The spatial shape input of the gradients only shapes the output.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override {
    if (Dir == ConvDirection::kForward) return {{true}, {true}};
    return {{true}, {true}, {false}};
  }
};

using AbstractConv2d = ConvOp<ConvDirection::kForward, 2>;
using AbstractConv2d_gradInputs = ConvOp<ConvDirection::kGradInputs, 2>;
using AbstractConv2d_gradWeights = ConvOp<ConvDirection::kGradWeights, 2>;
using AbstractConv3d = ConvOp<ConvDirection::kForward, 3>;
using AbstractConv3d_gradInputs = ConvOp<ConvDirection::kGradInputs, 3>;
using AbstractConv3d_gradWeights = ConvOp<ConvDirection::kGradWeights, 3>;

// The options of the builders below (Aesara's keyword arguments); subsample and
// filter_dilation empty mean all ones, the hints empty mean unknown.
struct ConvOptions {
  ConvBorder border_mode;
  std::vector<int> subsample;
  bool filter_flip = true;
  ConvShapeHint input_shape, filter_shape;
  std::vector<int> filter_dilation;
  int num_groups = 1;
};

// border_mode from Aesara's forms: "valid", "full", "half"; one int for every axis; or an int
// per axis (symmetric) / (low, high) pairs (pads_per_axis: {{p}, {lo, hi}}).
ConvBorder ConvBorderMode(absl::string_view mode);
ConvBorder ConvBorderPad(int64_t pad, int dim);
ConvBorder ConvBorderPads(const std::vector<std::vector<int64_t>>& pads_per_axis);

// The op of a D-d convolution's direction with these options, or INVALID_ARGUMENT.
absl::StatusOr<OpPtr> MakeConvOp(ConvDirection dir, int dim, const ConvOptions& options);

// aesara.tensor.nnet.conv2d / conv3d: AbstractConv{2,3}d(img, kern).
Var conv2d(const Var& input, const Var& filters, const ConvOptions& options = {});
Var conv3d(const Var& input, const Var& filters, const ConvOptions& options = {});
// conv{2,3}d_grad_wrt_inputs / _weights: the gradient ops, given the other operand, the
// output's gradient and the spatial shape (an integer vector) of what they compute.
Var conv_grad_wrt_inputs(int dim, const Var& filters, const Var& output_grad,
                         const Var& input_spatial_shape, const ConvOptions& options = {});
Var conv_grad_wrt_weights(int dim, const Var& input, const Var& output_grad,
                          const Var& filter_spatial_shape, const ConvOptions& options = {});

}  // namespace kiln

#endif  // KILN_CORE_OPS_CONV_H_
