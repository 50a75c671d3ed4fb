#include "core/ops/indexing.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/graph/status_macros.h"
#include "core/ops/elemwise_loops.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/runtime/dtype_dispatch.h"

namespace kiln {
namespace {

int NumScalars(const std::vector<IndexEntry>& idx) {
  int n = 0;
  for (const IndexEntry& e : idx) {
    n += e.is_slice ? e.has_start + e.has_stop + e.has_step : 1;
  }
  return n;
}

// The view of x that idx selects, given the index scalars in order (NumPy's rules: negative
// integers count from the end, slice bounds are clipped, steps may be negative, not zero).
absl::StatusOr<Tensor> IndexView(const Op& op, const Tensor& x, const std::vector<IndexEntry>& idx,
                                 std::span<const Tensor> scalars) {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  size_t next = 0;
  for (size_t d = 0; d < idx.size(); ++d) {
    const int64_t len = x.shape()[d], stride = x.strides()[d];
    const IndexEntry& e = idx[d];
    if (!e.is_slice) {
      int64_t i = ScalarInt(scalars[next++]);
      if (i < -len || i >= len) {
        return Invalid(
            op, absl::StrCat("index ", i, " is out of bounds for axis ", d, " with size ", len));
      }
      if (i < 0) i += len;
      offset += i * stride;
      continue;
    }
    const int64_t start = e.has_start ? ScalarInt(scalars[next++]) : 0;
    const int64_t stop = e.has_stop ? ScalarInt(scalars[next++]) : 0;
    const int64_t step = e.has_step ? ScalarInt(scalars[next++]) : 1;
    if (step == 0) return Invalid(op, "slice step cannot be zero");
    if (step == std::numeric_limits<int64_t>::min())
      return Invalid(op, "slice step is out of range");
    // A bound clipped into range as NumPy does; `absent` when the slice leaves it out.
    auto clip = [&](bool present, int64_t b, int64_t absent) {
      if (!present) return absent;
      if (b < 0) {
        b += len;
        if (b < 0) b = step < 0 ? -1 : 0;
      } else if (b >= len) {
        b = step < 0 ? len - 1 : len;
      }
      return b;
    };
    const int64_t lo = clip(e.has_start, start, step < 0 ? len - 1 : 0);
    const int64_t hi = clip(e.has_stop, stop, step < 0 ? -1 : len);
    int64_t n = 0;
    if (step > 0 && lo < hi) n = (hi - lo - 1) / step + 1;
    if (step < 0 && hi < lo) n = (lo - hi - 1) / (-step) + 1;
    shape.push_back(n);
    strides.push_back(n > 1 ? stride * step : stride);  // |step| may exceed len (not overflow)
    if (n > 0) offset += lo * stride;
  }
  for (int d = static_cast<int>(idx.size()); d < x.ndim(); ++d) {
    shape.push_back(x.shape()[d]);
    strides.push_back(x.strides()[d]);
  }
  return x.View(shape, strides, offset);
}

// out[i] (+)= y[i] over the view, y broadcast to it (right-aligned).
absl::Status Assign(const Op& op, Tensor& view, const Tensor& y, bool set) {
  std::optional<Tensor> yb = y.BroadcastTo(view.shape());
  if (!yb) {
    return Invalid(
        op, absl::StrCat("y of shape ", ShapeToString(y.shape()),
                         " does not broadcast to x[...] of shape ", ShapeToString(view.shape())));
  }
  const std::vector<int64_t> ys = yb->strides();
  // Converting keeps the broadcast strides only when no copy is made; recompute them after.
  const Tensor yc = y.dtype() == view.dtype() ? *yb : yb->AsType(view.dtype());
  const std::vector<int64_t>& ycs = y.dtype() == view.dtype() ? ys : yc.strides();
  DispatchDType(view.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = view.data<T>();
    const T* in = yc.data<T>();
    loops::ForEachRun<2>(
        view.shape(), {&view.strides(), &ycs}, 0, view.size(),
        [&](int64_t, int64_t count, auto& off) {
          const int64_t so = view.ndim() ? view.strides().back() : 0;
          const int64_t si = view.ndim() ? ycs.back() : 0;
          for (int64_t k = 0; k < count; ++k) {
            T& target = out[off[0] + k * so];
            const T v = in[off[1] + k * si];
            if (set) {
              target = v;
            } else if constexpr (std::is_same_v<T, bool>) {
              target = target || v;
            } else if constexpr (std::is_same_v<T, Eigen::half>) {
              target = T(static_cast<float>(target) + static_cast<float>(v));
            } else if constexpr (std::is_integral_v<T>) {
              target = static_cast<T>(static_cast<uint64_t>(target) + static_cast<uint64_t>(v));
            } else {
              target = target + v;
            }
          }
        });
  });
  return absl::OkStatus();
}

}  // namespace

std::string SubtensorOp::Name() const {
  if (kind_ == OpKind::kAdvancedSubtensor1) return "AdvancedSubtensor1";
  if (kind_ == OpKind::kAdvancedIncSubtensor1) {
    return absl::StrCat("AdvancedIncSubtensor1{", inplace_ ? "inplace" : "no_inplace",
                        set_ ? ",set}" : ",inc}");
  }
  const std::string entries = absl::StrJoin(idx_, ", ", [](std::string* out, const IndexEntry& e) {
    if (!e.is_slice) {
      absl::StrAppend(out, "int64");
      return;
    }
    absl::StrAppend(out, e.has_start ? "int64" : "", ":", e.has_stop ? "int64" : "", ":",
                    e.has_step ? "int64" : "");
  });
  if (kind_ == OpKind::kSubtensor) return absl::StrCat("Subtensor{", entries, "}");
  return absl::StrCat("IncSubtensor{", inplace_ ? "Inplace" : "", set_ ? "Set;" : "Inc;", entries,
                      "}");
}

std::vector<std::pair<int, int>> SubtensorOp::view_map() const {
  if (kind_ == OpKind::kSubtensor) return {{0, 0}};
  return {};
}

std::vector<std::pair<int, int>> SubtensorOp::destroy_map() const {
  if (inplace_) return {{0, 0}};
  return {};
}

absl::StatusOr<ApplyPtr> SubtensorOp::MakeNode(std::vector<VariablePtr> inputs) const {
  const bool inc = kind_ == OpKind::kIncSubtensor || kind_ == OpKind::kAdvancedIncSubtensor1;
  const bool advanced =
      kind_ == OpKind::kAdvancedSubtensor1 || kind_ == OpKind::kAdvancedIncSubtensor1;
  const size_t first_index = inc ? 2 : 1;
  const size_t expected = first_index + (advanced ? 1 : NumScalars(idx_));
  if (inputs.size() != expected) {
    return Invalid(*this, absl::StrCat("expects ", expected, " inputs, got ", inputs.size()));
  }
  std::vector<const TensorType*> t;
  for (size_t i = 0; i < inputs.size(); ++i) {
    t.push_back(inputs[i]->tensor_type());
    if (t.back() == nullptr) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                         ", which is not a TensorType"));
    }
  }
  const TensorType& x = *t[0];
  for (size_t i = first_index; i < inputs.size(); ++i) {
    const bool ok = advanced ? (t[i]->ndim() == 1 && IsInteger(t[i]->dtype()))
                             : (t[i]->ndim() == 0 && t[i]->dtype() == DType::kInt64);
    if (!ok) {
      return Invalid(
          *this, absl::StrCat("input ", i, " has type ", t[i]->ToString(), " but ",
                              advanced ? "an integer vector" : "an int64 scalar", " is needed"));
    }
  }
  if (advanced ? x.ndim() < 1 : static_cast<int>(idx_.size()) > x.ndim()) {
    return Invalid(*this, absl::StrCat("too many indices for ", x.ToString()));
  }
  if (inc) {
    if (PromoteTypes(x.dtype(), t[1]->dtype()) != x.dtype()) {
      return Invalid(*this, absl::StrCat("y has type ", t[1]->ToString(), ", which cannot be ",
                                         "stored in x of type ", x.ToString(), " without loss"));
    }
    TypePtr type = inputs[0]->type();
    return Apply::Make(self(), std::move(inputs), {type});
  }
  StaticShape shape;
  if (advanced) {
    shape.push_back(t[1]->shape()[0]);
    shape.insert(shape.end(), x.shape().begin() + 1, x.shape().end());
  } else {
    for (size_t d = 0; d < idx_.size(); ++d) {
      const IndexEntry& e = idx_[d];
      if (!e.is_slice) continue;
      const bool full = !e.has_start && !e.has_stop && !e.has_step;
      shape.push_back(full ? x.shape()[d] : std::nullopt);
    }
    shape.insert(shape.end(), x.shape().begin() + idx_.size(), x.shape().end());
  }
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(x.dtype(), shape)});
}

absl::Status SubtensorOp::Perform(const Apply& node, std::span<const Tensor> inputs,
                                  std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  switch (kind_) {
    case OpKind::kSubtensor: {
      ASSIGN_OR_RETURN(Tensor view, IndexView(*this, x, idx_, inputs.subspan(1)));
      outputs[0] = std::move(view);
      return absl::OkStatus();
    }
    case OpKind::kIncSubtensor: {
      Tensor out = x.AsType(x.dtype());  // a contiguous copy: x itself is never written
      ASSIGN_OR_RETURN(Tensor view, IndexView(*this, out, idx_, inputs.subspan(2)));
      RETURN_IF_ERROR(Assign(*this, view, inputs[1], set_));
      outputs[0] = std::move(out);
      return absl::OkStatus();
    }
    default: {
      const bool inc = kind_ == OpKind::kAdvancedIncSubtensor1;
      const Tensor& raw_idx = inputs[inc ? 2 : 1];
      if (raw_idx.dtype() == DType::kUInt64) {
        const Tensor c = raw_idx.Contiguous();
        for (int64_t i = 0; i < c.size(); ++i) {
          if (c.data<uint64_t>()[i] > static_cast<uint64_t>(x.shape()[0])) {
            return Invalid(*this,
                           absl::StrCat("index ", c.data<uint64_t>()[i],
                                        " is out of bounds for axis 0 with size ", x.shape()[0]));
          }
        }
      }
      const Tensor idx = raw_idx.AsType(DType::kInt64);
      const int64_t len = x.shape()[0];
      std::vector<int64_t> rows(idx.size());
      for (int64_t i = 0; i < idx.size(); ++i) {
        int64_t r = idx.data<int64_t>()[i];
        if (r < -len || r >= len) {
          return Invalid(*this,
                         absl::StrCat("index ", r, " is out of bounds for axis 0 with size ", len));
        }
        rows[i] = r < 0 ? r + len : r;
      }
      Shape row_shape(x.shape().begin() + 1, x.shape().end());
      std::vector<int64_t> row_strides(x.strides().begin() + 1, x.strides().end());
      if (!inc) {
        Shape shape = {idx.size()};
        shape.insert(shape.end(), row_shape.begin(), row_shape.end());
        Tensor out = Tensor::Empty(x.dtype(), shape);
        Shape one_row = row_shape;
        for (int64_t i = 0; i < idx.size(); ++i) {
          Tensor dst = out.View(one_row, ContiguousStrides(one_row), i * ShapeSize(one_row));
          RETURN_IF_ERROR(
              Assign(*this, dst, x.View(row_shape, row_strides, rows[i] * x.strides()[0]), true));
        }
        outputs[0] = std::move(out);
        return absl::OkStatus();
      }
      // y broadcasts to (len(idx),) + row shape; each of its rows goes to its index, in order.
      Tensor out = x.AsType(x.dtype());
      const Tensor& y = inputs[1];
      Shape target = {idx.size()};
      target.insert(target.end(), row_shape.begin(), row_shape.end());
      std::optional<Tensor> broadcast = y.BroadcastTo(target);
      if (!broadcast) {
        return Invalid(
            *this, absl::StrCat("y of shape ", ShapeToString(y.shape()),
                                " does not broadcast to x[idx] of shape ", ShapeToString(target)));
      }
      const Tensor& yb = *broadcast;
      for (int64_t i = 0; i < idx.size(); ++i) {
        Tensor dst = out.View(row_shape, ContiguousStrides(row_shape), rows[i] * out.strides()[0]);
        std::vector<int64_t> src_strides(yb.strides().begin() + 1, yb.strides().end());
        Tensor src = yb.View(row_shape, src_strides, i * yb.strides()[0]);
        RETURN_IF_ERROR(Assign(*this, dst, src, set_));
      }
      outputs[0] = std::move(out);
      return absl::OkStatus();
    }
  }
}

// --- DSL --------------------------------------------------------------------------------------

Bound::Bound(int64_t v) : var(constant(v)) {}

namespace {

// The bound as an int64 scalar variable (constants are typed int64, as Aesara's index constants).
absl::StatusOr<Var> IndexScalar(const Var& v) {
  if (!v.ok()) return v.status();
  const TensorType* t = v->tensor_type();
  if (t == nullptr || t->ndim() != 0 || !IsInteger(t->dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat("subtensor: the index ", v->ToString(), " is not an integer scalar"));
  }
  if (v->is_constant()) {
    return scalar_constant(ScalarInt(static_cast<const Constant&>(*v).data()), DType::kInt64);
  }
  return cast(v, DType::kInt64);
}

}  // namespace

Var subtensor(const Var& x, const std::vector<Index>& idx) {
  if (!x.ok()) return x;
  std::vector<IndexEntry> entries;
  std::vector<Var> inputs = {x};
  auto add = [&](const Bound& b, bool* present) -> absl::Status {
    *present = b.var.has_value();
    if (!b.var) return absl::OkStatus();
    ASSIGN_OR_RETURN(Var s, IndexScalar(*b.var));
    inputs.push_back(s);
    return absl::OkStatus();
  };
  for (const Index& i : idx) {
    IndexEntry e;
    absl::Status s;
    if (i.slice) {
      e.is_slice = true;
      if (s = add(i.slice->start, &e.has_start); s.ok()) {
        if (s = add(i.slice->stop, &e.has_stop); s.ok()) s = add(i.slice->step, &e.has_step);
      }
    } else {
      bool present;
      s = add(i.value, &present);
      if (s.ok() && !present) s = absl::InvalidArgumentError("subtensor: an index is None");
    }
    if (!s.ok()) return Var(s);
    entries.push_back(e);
  }
  return ApplyOp(OpPtr(std::make_shared<SubtensorOp>(OpKind::kSubtensor, entries)), inputs);
}

Var take(const Var& x, const Var& indices) {
  return ApplyOp(
      OpPtr(std::make_shared<SubtensorOp>(OpKind::kAdvancedSubtensor1, std::vector<IndexEntry>{})),
      {x, indices});
}

namespace {

Var IncOrSet(const Var& indexed, const Var& y, bool set) {
  if (!indexed.ok()) return indexed;
  if (!y.ok()) return y;
  const Apply* node = indexed->owner();
  const auto* op = node ? dynamic_cast<const SubtensorOp*>(&node->op()) : nullptr;
  if (op == nullptr ||
      (op->kind() != OpKind::kSubtensor && op->kind() != OpKind::kAdvancedSubtensor1)) {
    return Var(absl::InvalidArgumentError(
        absl::StrCat(set ? "set_subtensor" : "inc_subtensor", ": ", indexed->ToString(),
                     " is not the result of indexing (subtensor or take)")));
  }
  std::vector<Var> inputs = {node->inputs()[0], y};
  for (int i = 1; i < node->num_inputs(); ++i) inputs.push_back(node->inputs()[i]);
  const OpKind kind =
      op->kind() == OpKind::kSubtensor ? OpKind::kIncSubtensor : OpKind::kAdvancedIncSubtensor1;
  return ApplyOp(OpPtr(std::make_shared<SubtensorOp>(kind, op->idx(), set)), inputs);
}

}  // namespace

Var set_subtensor(const Var& indexed, const Var& y) { return IncOrSet(indexed, y, true); }
Var inc_subtensor(const Var& indexed, const Var& y) { return IncOrSet(indexed, y, false); }

// Subtensor: full slices keep the input dim, integer entries drop it, other slices fall back to
// Shape_i of the output (as Aesara's ShapeFeature does for dims it cannot infer); Inc*: x's shape;
// AdvancedSubtensor1: (len(idx),)
// + x.shape[1:].
absl::StatusOr<std::vector<std::vector<VariablePtr>>> SubtensorOp::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  if (kind_ == OpKind::kIncSubtensor || kind_ == OpKind::kAdvancedIncSubtensor1) {
    return std::vector<ShapeVars>{in[0]};
  }
  if (kind_ == OpKind::kAdvancedSubtensor1) {
    ShapeVars out = {in[1][0]};
    out.insert(out.end(), in[0].begin() + 1, in[0].end());
    return std::vector<ShapeVars>{out};
  }
  ShapeVars out;
  int out_dim = 0;
  for (size_t d = 0; d < idx_.size(); ++d) {
    const IndexEntry& e = idx_[d];
    if (!e.is_slice) continue;
    if (!e.has_start && !e.has_stop && !e.has_step) {
      out.push_back(in[0][d]);
    } else {
      out.push_back(DimOf(node.output(0), out_dim));
    }
    ++out_dim;
  }
  out.insert(out.end(), in[0].begin() + idx_.size(), in[0].end());
  return std::vector<ShapeVars>{out};
}

// --- Wire attributes ----------------------------------------------------------------------------

KILN_REGISTER_OP_KIND(SubtensorOp, kSubtensor);
KILN_REGISTER_OP_KIND(SubtensorOp, kIncSubtensor);
KILN_REGISTER_OP_KIND(SubtensorOp, kAdvancedSubtensor1);
KILN_REGISTER_OP_KIND(SubtensorOp, kAdvancedIncSubtensor1);

OpAttrs SubtensorOp::Attrs() const {
  // Each entry: bit 0 a slice, bits 1-3 whether it has a start, stop and step.
  std::vector<int64_t> idx;
  for (const IndexEntry& e : idx_) {
    idx.push_back(e.is_slice | e.has_start << 1 | e.has_stop << 2 | e.has_step << 3);
  }
  return {{"idx_list", idx}, {"set", int64_t{set_}}, {"inplace", int64_t{inplace_}}};
}

absl::StatusOr<OpPtr> SubtensorOp::FromAttrs(OpKind kind, const OpAttrs& a) {
  absl::StatusOr<std::optional<std::vector<int64_t>>> bits =
      DecodeAttr<std::optional<std::vector<int64_t>>>(a, "idx_list");
  if (!bits.ok()) return bits.status();
  std::vector<IndexEntry> idx;
  for (int64_t b : bits->value_or(std::vector<int64_t>{})) {
    if (b < 0 || b > 15 || (!(b & 1) && b != 0)) {
      return absl::InvalidArgumentError("bad idx_list entry");
    }
    idx.push_back({(b & 1) != 0, (b & 2) != 0, (b & 4) != 0, (b & 8) != 0});
  }
  ASSIGN_OR_RETURN(std::optional<bool> set, DecodeAttr<std::optional<bool>>(a, "set"));
  absl::StatusOr<std::optional<bool>> inplace = DecodeAttr<std::optional<bool>>(a, "inplace");
  if (!inplace.ok()) return inplace.status();
  return OpPtr(
      std::make_shared<SubtensorOp>(kind, idx, set.value_or(false), inplace->value_or(false)));
}

}  // namespace kiln
