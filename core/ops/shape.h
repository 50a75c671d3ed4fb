// Aesara's shape ops: Shape, Shape_i, Reshape, SpecifyShape and MakeVector, and the functions
// built on them (flatten, expand_dims, squeeze).
#ifndef KILN_CORE_OPS_SHAPE_H_
#define KILN_CORE_OPS_SHAPE_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// x.shape: an int64 vector of x's dims.
class ShapeOp final : public DeclaredOp<ShapeOp, NoAttrs> {
 public:
  KILN_DECLARED_OP("Shape")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// x.shape[i]: an int64 scalar.
struct ShapeIAttrs {
  int i = 0;
  static constexpr auto Fields() { return std::tuple{AttrField{"i", &ShapeIAttrs::i}}; }
  absl::Status Check() const { return CheckDimIndex("i", i); }
};
class ShapeI final : public DeclaredOp<ShapeI, ShapeIAttrs> {
 public:
  KILN_DECLARED_OP("Shape_i")
  explicit ShapeI(int i) : DeclaredOp({i}) {}
  int i() const { return attrs().i; }
  std::string Name() const override;  // "Shape_i{0}"
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// x.reshape(shape) for an integer vector `shape` of `ndim` entries, one of which may be -1.
// A view when x is contiguous; static dims come from a constant shape.
struct ReshapeAttrs {
  int ndim = 0;
  static constexpr auto Fields() { return std::tuple{AttrField{"ndim", &ReshapeAttrs::ndim}}; }
  absl::Status Check() const { return CheckDimIndex("ndim", ndim); }
};
class Reshape final : public DeclaredOp<Reshape, ReshapeAttrs> {
 public:
  KILN_DECLARED_OP("Reshape")
  explicit Reshape(int ndim) : DeclaredOp({ndim}) {}
  int ndim() const { return attrs().ndim; }
  std::string Name() const override;  // "Reshape{2}"
  // The output is a view of x when x is contiguous.
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// specify_shape(x, dims): x, checked at run time to have the given dims (integer scalars, -1
// for a dim left unchecked); constant dims become static.
class SpecifyShape final : public DeclaredOp<SpecifyShape, NoAttrs> {
 public:
  KILN_DECLARED_OP("SpecifyShape")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
};

// A vector of `dtype` from scalars (cast to it when lossless).
struct MakeVectorAttrs {
  DType dtype = DType::kInt64;
  static constexpr auto Fields() { return std::tuple{AttrField{"dtype", &MakeVectorAttrs::dtype}}; }
};
class MakeVector final : public DeclaredOp<MakeVector, MakeVectorAttrs> {
 public:
  KILN_DECLARED_OP("MakeVector")  // MakeVector{dtype='int64'}
  explicit MakeVector(DType dtype) : DeclaredOp({dtype}) {}
  DType dtype() const { return attrs().dtype; }
};

// x.shape, x.shape[i] (negative i counts from the end).
Var shape(const Var& x);
Var shape_i(const Var& x, int i);
// x.reshape(dims) with constant dims (one may be -1), or with a symbolic integer vector.
Var reshape(const Var& x, const std::vector<int64_t>& dims);
Var reshape(const Var& x, const Var& dims);
// specify_shape(x, dims): kUnknownDim leaves a dim unchecked.
Var specify_shape(const Var& x, const StaticShape& dims);
// make_vector(scalars...) as int64, or the given dtype.
Var make_vector(const std::vector<Var>& scalars, DType dtype = DType::kInt64);
// x.flatten(ndim): the leading ndim - 1 dims kept, the rest merged.
Var flatten(const Var& x, int ndim = 1);
// expand_dims(x, axis): a broadcastable dim inserted at axis (negative counts from the end).
Var expand_dims(const Var& x, int axis);
// squeeze(x): every broadcastable dim dropped; squeeze(x, axes): those, which must be.
Var squeeze(const Var& x);
Var squeeze(const Var& x, const std::vector<int>& axes);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SHAPE_H_
