// What an operator's importer sees of its ONNX node: its inputs as Kiln variables, the values of
// those that are constants, its attributes with their defaults, and the opset (import.cc).
#ifndef KILN_PROTO_ONNX_IMPORT_NODE_H_
#define KILN_PROTO_ONNX_IMPORT_NODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/graph/type.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx {

class ImportNode {
 public:
  ImportNode(const ::onnx::NodeProto& proto, int64_t opset, std::vector<Var> inputs,
             std::vector<std::optional<Tensor>> constants,
             std::vector<std::optional<StaticShape>> output_shapes, int64_t max_tensor_bytes)
      : proto_(proto),
        opset_(opset),
        inputs_(std::move(inputs)),
        constants_(std::move(constants)),
        output_shapes_(std::move(output_shapes)),
        max_tensor_bytes_(max_tensor_bytes) {}

  const ::onnx::NodeProto& proto() const { return proto_; }
  const std::string& op() const { return proto_.op_type(); }
  // The model's opset of the default domain.
  int64_t opset() const { return opset_; }

  // The number of inputs given (trailing optional ones may be absent), and whether input i is
  // given (an empty name skips an optional input).
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has(int i) const { return i < num_inputs() && inputs_[i].ok(); }
  // Input i (INVALID_ARGUMENT naming the node when it is absent).
  Var in(int i) const;
  // Input i's value when it is a constant (an initializer or a Constant node's output).
  const std::optional<Tensor>& constant(int i) const;
  // Input i's value as integers: it must be a constant (UNIMPLEMENTED naming the node when it
  // is computed at run time).
  absl::StatusOr<std::vector<int64_t>> ConstantInts(int i, absl::string_view what) const;

  // The most bytes a tensor the importer makes may hold (the initializers' limit).
  int64_t max_tensor_bytes() const { return max_tensor_bytes_; }

  // What ONNX's shape inference knows of output i's shape (nullopt: not even its rank).
  std::optional<StaticShape> OutputShape(int i) const {
    return i < static_cast<int>(output_shapes_.size()) ? output_shapes_[i] : std::nullopt;
  }

  // Attributes, with the default when absent.
  bool has_attr(absl::string_view name) const { return Attr(name) != nullptr; }
  int64_t Int(absl::string_view name, int64_t fallback) const;
  float Float(absl::string_view name, float fallback) const;
  std::string String(absl::string_view name, std::string fallback) const;
  std::vector<int64_t> Ints(absl::string_view name) const;
  std::vector<float> Floats(absl::string_view name) const;
  absl::StatusOr<std::optional<Tensor>> TensorAttr(absl::string_view name) const;

  // Errors naming the node: a malformed node, and one Kiln does not take.
  absl::Status Invalid(absl::string_view why) const;
  absl::Status Unimplemented(absl::string_view why) const;
  // "Conv node 'conv1' (opset 13)".
  std::string Describe() const;

 private:
  const ::onnx::AttributeProto* Attr(absl::string_view name) const;
  const ::onnx::NodeProto& proto_;
  int64_t opset_;
  std::vector<Var> inputs_;
  std::vector<std::optional<Tensor>> constants_;
  std::vector<std::optional<StaticShape>> output_shapes_;
  int64_t max_tensor_bytes_;
};

// An importer's result: the node's outputs, one Var per output the node names.
using NodeOutputs = absl::StatusOr<std::vector<Var>>;
using OpImporter = NodeOutputs (*)(const ImportNode& node);
using OpTable = absl::flat_hash_map<std::string, OpImporter>;

// The importers of each family of operators (one file each).
void AddElementwiseImporters(OpTable& table);
void AddReduceImporters(OpTable& table);
void AddShapeImporters(OpTable& table);
void AddNetworkImporters(OpTable& table);
void AddIndexImporters(OpTable& table);
void AddRecurrentImporters(OpTable& table);
void AddResampleImporters(OpTable& table);
void AddSelectImporters(OpTable& table);
void AddEinsumImporters(OpTable& table);
void AddQuantizedImporters(OpTable& table);
void AddGridSampleImporters(OpTable& table);

// The largest size, stride, pad or count an attribute may give: sums of a few products of two
// stay well inside int64.
inline constexpr int64_t kLargestAttribute = (int64_t{1} << 31) - 1;

// OK when `values` (the attribute `what`) has `count` entries, each in [least,
// kLargestAttribute]; else INVALID_ARGUMENT naming the node and the attribute.
absl::Status CheckSizes(const ImportNode& n, absl::string_view what,
                        const std::vector<int64_t>& values, size_t count, int64_t least);

// A 0-d constant of x's dtype (x itself when it failed).
Var ScalarLike(const Var& x, double value);

// arange(like.shape[d]) laid along axis `axis` of a rank-`rank` tensor (broadcast on the others):
// the positions an advanced index or a comparison reads along one dim.
Var PositionsAlong(const Var& like, int d, int axis, int rank);

// x at positions `idx` (an int64 vector) along `axis` (NumPy's take).
Var TakeAlong(const Var& x, int axis, const Var& idx);

// out[i][j][k] = data[indices[i][j][k]][j][k] (for axis 0; NumPy's take_along_axis): an
// advanced index of the indices on `axis` and of each position elsewhere.
Var GatherAlongAxis(const Var& data, const Var& indices, int axis);

// ONNX Conv's correlation of x by the filters w under the node's attributes (kernel_shape,
// strides, dilations, pads, auto_pad, group), without a bias (ops_network.cc).
absl::StatusOr<Var> ConvolveAsOnnx(const ImportNode& n, Var x, Var w);

// Axis `axis` of a rank-`rank` tensor as a non-negative index, or INVALID_ARGUMENT.
absl::StatusOr<int> NormalizeAxis(const ImportNode& node, int64_t axis, int rank);

}  // namespace kiln::onnx

#endif  // KILN_PROTO_ONNX_IMPORT_NODE_H_
