// Building tensors: Alloc (zeros, ones, full and the *_like forms), ARange, Eye, and Join and
// Split (concatenate, stack, split).
#ifndef KILN_CORE_OPS_ALLOC_H_
#define KILN_CORE_OPS_ALLOC_H_

#include <optional>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Alloc(value, *dims): value broadcast to the shape `dims` (integer scalars).
class Alloc final : public DeclaredOp<Alloc, NoAttrs> {
 public:
  KILN_DECLARED_OP("Alloc")
  // The dims only shape the output.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// The output dtype of ARange and Eye.
struct DTypeAttrs {
  DType dtype = DType::kFloat64;
  static constexpr auto Fields() { return std::tuple{AttrField{"dtype", &DTypeAttrs::dtype}}; }
};

// ARange{dtype}(start, stop, step): numpy.arange; "ARange{dtype='int64'}".
class ARange final : public DeclaredOp<ARange, DTypeAttrs> {
 public:
  KILN_DECLARED_OP("ARange")
  // stop only bounds the output.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override {
    return {{true}, {false}, {true}};
  }
};

// Eye{dtype}(n, m, k): ones on the k-th diagonal of an n x m matrix; "Eye{dtype='float64'}".
class Eye final : public DeclaredOp<Eye, DTypeAttrs> {
 public:
  KILN_DECLARED_OP("Eye")
};

// Join(axis, *tensors): numpy.concatenate along a constant axis.
class Join final : public DeclaredOp<Join, NoAttrs> {
 public:
  KILN_DECLARED_OP("Join")
};

// The number of pieces Split makes, at most kMaxSplits (each piece is a variable the request
// makes the server allocate).
struct SplitAttrs {
  static constexpr int kMaxSplits = 1 << 16;
  int n_splits = 0;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"n_splits", &SplitAttrs::n_splits}};
  }
  absl::Status Check() const;
};

// Split{n}(x, axis, sizes): n views of x along the axis, of the given sizes; "Split{2}".
class Split final : public DeclaredOp<Split, SplitAttrs> {
 public:
  KILN_DECLARED_OP("Split")
  std::string Name() const override;
  // Every output is a view of x.
  std::vector<std::pair<int, int>> view_map() const override;
};

// alloc(value, dims): value broadcast to the shape `dims` (integer scalars).
Var alloc(const Var& value, const std::vector<Var>& dims);
// zeros / ones / full of a constant shape or of symbolic dims, in `dtype`.
Var zeros(const std::vector<Var>& dims, DType dtype = DType::kFloat64);
Var ones(const std::vector<Var>& dims, DType dtype = DType::kFloat64);
Var full(const std::vector<Var>& dims, const Var& fill_value);
// Aesara's *_like: fill(x, value), an Elemwise{second}; dtype defaults to x's.
Var zeros_like(const Var& x, std::optional<DType> dtype = std::nullopt);
Var ones_like(const Var& x, std::optional<DType> dtype = std::nullopt);
// arange(start, stop, step): int64 for integer bounds, float64 otherwise, unless `dtype` is given.
Var arange(const Var& start, const Var& stop, const Var& step,
           std::optional<DType> dtype = std::nullopt);
Var arange(const Var& stop);
// eye(n, m, k): ones on the k-th diagonal of an n x m matrix.
Var eye(const Var& n, const Var& m, const Var& k, DType dtype = DType::kFloat64);
Var eye(int64_t n, DType dtype = DType::kFloat64);
// concatenate(tensors, axis) and stack(tensors, axis) (a new axis).
Var concatenate(const std::vector<Var>& tensors, int axis = 0);
Var stack(const std::vector<Var>& tensors, int axis = 0);
// split(x, sizes, axis): len(sizes) pieces along axis; sizes must add up to x.shape[axis].
std::vector<Var> split(const Var& x, const std::vector<int64_t>& sizes, int axis = 0);

}  // namespace kiln

#endif  // KILN_CORE_OPS_ALLOC_H_
