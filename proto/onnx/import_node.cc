#include "proto/onnx/import_node.h"

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/shape.h"
#include "proto/onnx/onnx_tensor.h"

namespace kiln::onnx {

Var ImportNode::in(int i) const {
  if (has(i)) return inputs_[i];
  return Invalid(absl::StrCat("input ", i, " is required"));
}

const std::optional<Tensor>& ImportNode::constant(int i) const {
  static const std::optional<Tensor> kNone;
  return i < num_inputs() ? constants_[i] : kNone;
}

absl::StatusOr<std::vector<int64_t>> ImportNode::ConstantInts(int i, absl::string_view what) const {
  const std::optional<Tensor>& c = constant(i);
  if (!c.has_value()) {
    return Unimplemented(
        absl::StrCat(what, " (input ", i, ") computed at run time: Kiln needs it as a constant"));
  }
  if (!IsInteger(c->dtype())) return Invalid(absl::StrCat(what, " must be integers"));
  const Tensor t = c->AsType(DType::kInt64).Contiguous();
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.size());
}

const ::onnx::AttributeProto* ImportNode::Attr(absl::string_view name) const {
  for (const auto& a : proto_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t ImportNode::Int(absl::string_view name, int64_t fallback) const {
  const auto* a = Attr(name);
  return a == nullptr ? fallback : a->i();
}

float ImportNode::Float(absl::string_view name, float fallback) const {
  const auto* a = Attr(name);
  return a == nullptr ? fallback : a->f();
}

std::string ImportNode::String(absl::string_view name, std::string fallback) const {
  const auto* a = Attr(name);
  return a == nullptr ? fallback : a->s();
}

std::vector<int64_t> ImportNode::Ints(absl::string_view name) const {
  const auto* a = Attr(name);
  if (a == nullptr) return {};
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> ImportNode::Floats(absl::string_view name) const {
  const auto* a = Attr(name);
  if (a == nullptr) return {};
  return {a->floats().begin(), a->floats().end()};
}

absl::StatusOr<std::optional<Tensor>> ImportNode::TensorAttr(absl::string_view name) const {
  const auto* a = Attr(name);
  if (a == nullptr || !a->has_t()) return std::nullopt;
  absl::StatusOr<Tensor> t =
      TensorFromOnnx(a->t(), absl::StrCat(Describe(), " attribute ", name), max_tensor_bytes_);
  if (!t.ok()) return t.status();
  return std::optional<Tensor>(*std::move(t));
}

std::string ImportNode::Describe() const {
  return absl::StrCat(proto_.op_type(), " node '", proto_.name(), "' (opset ", opset_, ")");
}

absl::Status ImportNode::Invalid(absl::string_view why) const {
  return absl::InvalidArgumentError(absl::StrCat(Describe(), ": ", why));
}

absl::Status ImportNode::Unimplemented(absl::string_view why) const {
  return absl::UnimplementedError(absl::StrCat(Describe(), ": not supported: ", why));
}

Var ScalarLike(const Var& x, double value) {
  if (!x.ok()) return x;
  return scalar_constant(value, x.dtype());
}

absl::Status CheckSizes(const ImportNode& n, absl::string_view what,
                        const std::vector<int64_t>& values, size_t count, int64_t least) {
  if (values.size() != count) {
    return n.Invalid(absl::StrCat(what, " has ", values.size(), " entries, not ", count));
  }
  for (int64_t v : values) {
    if (v < least || v > kLargestAttribute) {
      return n.Invalid(
          absl::StrCat(what, " holds ", v, ", outside [", least, ", ", kLargestAttribute, "]"));
    }
  }
  return absl::OkStatus();
}

Var PositionsAlong(const Var& like, int d, int axis, int rank) {
  std::vector<int> order(rank, -1);
  order[axis] = 0;
  return dimshuffle(arange(shape_i(like, d)), order);
}

Var TakeAlong(const Var& x, int axis, const Var& idx) {
  std::vector<AdvIndex> index(axis, AdvIndex::FullSlice());
  index.push_back(AdvIndex(idx));
  return advanced_subtensor(x, index);
}

Var GatherAlongAxis(const Var& data, const Var& indices, int axis) {
  std::vector<AdvIndex> idx;
  for (int d = 0; d < data.ndim(); ++d) {
    idx.push_back(d == axis ? AdvIndex(indices)
                            : AdvIndex(PositionsAlong(indices, d, d, indices.ndim())));
  }
  return advanced_subtensor(data, idx);
}

absl::StatusOr<int> NormalizeAxis(const ImportNode& node, int64_t axis, int rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    return node.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return static_cast<int>(a);
}

}  // namespace kiln::onnx
