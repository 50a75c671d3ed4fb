#include "core/ops/indexing.h"


#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/ops/advanced_indexing.h"
#include "core/tensor/status_macros.h"
#include "core/ops/elemwise_loops.h"
#include "core/ops/indexing_kernels.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/ops/slice_bounds.h"
#include "core/tensor/dtype_dispatch.h"

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
  shape.reserve(x.ndim());
  strides.reserve(x.ndim());
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
    std::optional<int64_t> start, stop;
    if (e.has_start) start = ScalarInt(scalars[next++]);
    if (e.has_stop) stop = ScalarInt(scalars[next++]);
    const int64_t step = e.has_step ? ScalarInt(scalars[next++]) : 1;
    ASSIGN_OR_RETURN(const SliceSpan span, ClipSlice(op, len, start, stop, step));
    shape.push_back(span.count);
    // |step| may exceed len (not overflow)
    strides.push_back(span.count > 1 ? stride * step : stride);
    if (span.count > 0) offset += span.first * stride;
  }
  for (int d = static_cast<int>(idx.size()); d < x.ndim(); ++d) {
    shape.push_back(x.shape()[d]);
    strides.push_back(x.strides()[d]);
  }
  return x.View(std::move(shape), std::move(strides), offset);
}

// out[i] (+)= y[i] over the view, y broadcast to it (right-aligned).
absl::Status Assign(const Op& op, Tensor& view, const Tensor& y, bool set) {
  std::optional<Tensor> yb = y.BroadcastTo(view.shape());
  if (!yb) {
    return Invalid(
        op, absl::StrCat("y of shape ", ShapeToString(y.shape()),
                         " does not broadcast to x[...] of shape ", ShapeToString(view.shape())));
  }
  const Shape ys = yb->strides();
  // Converting keeps the broadcast strides only when no copy is made; recompute them after.
  const Tensor yc = y.dtype() == view.dtype() ? *yb : yb->AsType(view.dtype());
  const Shape& ycs = y.dtype() == view.dtype() ? ys : yc.strides();
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

namespace {

// The inputs' tensor types, after checking their count and the index inputs from `first_index`
// on: int64 scalars for basic indexing, integer vectors for advanced. x must have at least
// `indexed_dims` dims.
absl::StatusOr<std::vector<const TensorType*>> IndexedTypes(const Op& op,
                                                            const std::vector<VariablePtr>& inputs,
                                                            size_t first_index, size_t n_index,
                                                            bool advanced, size_t indexed_dims) {
  const size_t expected = first_index + n_index;
  if (inputs.size() != expected) {
    return Invalid(op, absl::StrCat("expects ", expected, " inputs, got ", inputs.size()));
  }
  std::vector<const TensorType*> t;
  for (size_t i = 0; i < inputs.size(); ++i) {
    t.push_back(inputs[i]->tensor_type());
    if (t.back() == nullptr) {
      return Invalid(op, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                      ", which is not a TensorType"));
    }
  }
  for (size_t i = first_index; i < inputs.size(); ++i) {
    const bool ok = advanced ? (t[i]->ndim() == 1 && IsInteger(t[i]->dtype()))
                             : (t[i]->ndim() == 0 && t[i]->dtype() == DType::kInt64);
    if (!ok) {
      return Invalid(
          op, absl::StrCat("input ", i, " has type ", t[i]->ToString(), " but ",
                           advanced ? "an integer vector" : "an int64 scalar", " is needed"));
    }
  }
  if (indexed_dims > static_cast<size_t>(t[0]->ndim())) {
    return Invalid(op, absl::StrCat("too many indices for ", t[0]->ToString()));
  }
  return t;
}

// y (input 1) must be storable in x without loss.
absl::Status CheckIncrement(const Op& op, const std::vector<const TensorType*>& t) {
  if (PromoteTypes(t[0]->dtype(), t[1]->dtype()) != t[0]->dtype()) {
    return Invalid(op, absl::StrCat("y has type ", t[1]->ToString(), ", which cannot be ",
                                    "stored in x of type ", t[0]->ToString(), " without loss"));
  }
  return absl::OkStatus();
}

std::string InplaceFlag(bool inplace) { return inplace ? "inplace" : "no_inplace"; }

}  // namespace

// --- Subtensor --------------------------------------------------------------------------------

std::string Subtensor::Name() const {
  return absl::StrCat("Subtensor{", op_decl::Codec<std::vector<IndexEntry>>::Repr(idx()), "}");
}

absl::StatusOr<ApplyPtr> Subtensor::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(std::vector<const TensorType*> t,
                   IndexedTypes(*this, inputs, 1, NumScalars(idx()), false, idx().size()));
  const TensorType& x = *t[0];
  StaticShape shape;
  for (size_t d = 0; d < idx().size(); ++d) {
    const IndexEntry& e = idx()[d];
    if (!e.is_slice) continue;
    const bool full = !e.has_start && !e.has_stop && !e.has_step;
    shape.push_back(full ? x.shape()[d] : std::nullopt);
  }
  shape.insert(shape.end(), x.shape().begin() + idx().size(), x.shape().end());
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(x.dtype(), shape)});
}

absl::Status Subtensor::Perform(const Apply&, std::span<const Tensor> inputs,
                                std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(Tensor view, IndexView(*this, inputs[0], idx(), inputs.subspan(1)));
  outputs[0] = std::move(view);
  return absl::OkStatus();
}

// Full slices keep the input dim, integer entries drop it, other slices fall back to Shape_i of
// the output (as Aesara's ShapeFeature does for dims it cannot infer).
absl::StatusOr<std::vector<ShapeVars>> Subtensor::InferShape(
    const Apply& node, const std::vector<ShapeVars>& in) const {
  ShapeVars out;
  int out_dim = 0;
  for (size_t d = 0; d < idx().size(); ++d) {
    const IndexEntry& e = idx()[d];
    if (!e.is_slice) continue;
    if (!e.has_start && !e.has_stop && !e.has_step) {
      out.push_back(in[0][d]);
    } else {
      out.push_back(DimOf(node.output(0), out_dim));
    }
    ++out_dim;
  }
  out.insert(out.end(), in[0].begin() + idx().size(), in[0].end());
  return std::vector<ShapeVars>{out};
}

// --- IncSubtensor -----------------------------------------------------------------------------

std::string IncSubtensor::Name() const {
  return absl::StrCat("IncSubtensor{", attrs().inplace ? "Inplace" : "",
                      attrs().set ? "Set;" : "Inc;",
                      op_decl::Codec<std::vector<IndexEntry>>::Repr(idx()), "}");
}

absl::StatusOr<ApplyPtr> IncSubtensor::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(std::vector<const TensorType*> t,
                   IndexedTypes(*this, inputs, 2, NumScalars(idx()), false, idx().size()));
  RETURN_IF_ERROR(CheckIncrement(*this, t));
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {type});
}

absl::Status IncSubtensor::Perform(const Apply&, std::span<const Tensor> inputs,
                                   std::vector<Tensor>& outputs) const {
  Tensor out = inputs[0].AsType(inputs[0].dtype());  // a contiguous copy: x is never written
  ASSIGN_OR_RETURN(Tensor view, IndexView(*this, out, idx(), inputs.subspan(2)));
  RETURN_IF_ERROR(Assign(*this, view, inputs[1], attrs().set));
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// x's shape.
absl::StatusOr<std::vector<ShapeVars>> IncSubtensor::InferShape(
    const Apply&, const std::vector<ShapeVars>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

// --- AdvancedSubtensor1 -----------------------------------------------------------------------

absl::StatusOr<ApplyPtr> AdvancedSubtensor1::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(std::vector<const TensorType*> t, IndexedTypes(*this, inputs, 1, 1, true, 1));
  StaticShape shape = {t[1]->shape()[0]};
  shape.insert(shape.end(), t[0]->shape().begin() + 1, t[0]->shape().end());
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(t[0]->dtype(), shape)});
}

absl::Status AdvancedSubtensor1::Perform(const Apply&, std::span<const Tensor> inputs,
                                         std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(outputs[0], TakeRows(*this, inputs[0], inputs[1]));
  return absl::OkStatus();
}

// (len(indices),) + x.shape[1:].
absl::StatusOr<std::vector<ShapeVars>> AdvancedSubtensor1::InferShape(
    const Apply&, const std::vector<ShapeVars>& in) const {
  ShapeVars out = {in[1][0]};
  out.insert(out.end(), in[0].begin() + 1, in[0].end());
  return std::vector<ShapeVars>{out};
}

// --- AdvancedIncSubtensor1 --------------------------------------------------------------------

std::string AdvancedIncSubtensor1::Name() const {
  return absl::StrCat("AdvancedIncSubtensor1{", InplaceFlag(attrs().inplace),
                      attrs().set ? ",set}" : ",inc}");
}

absl::StatusOr<ApplyPtr> AdvancedIncSubtensor1::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(std::vector<const TensorType*> t, IndexedTypes(*this, inputs, 2, 1, true, 1));
  RETURN_IF_ERROR(CheckIncrement(*this, t));
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {type});
}

// y broadcasts to (len(indices),) + x.shape[1:]; each of its rows goes to its index, in order.
// In place when x is contiguous (the runtime has made sure nothing else reads it), else on a
// contiguous copy.
absl::Status AdvancedIncSubtensor1::Perform(const Apply&, std::span<const Tensor> inputs,
                                            std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  const Tensor& y = inputs[1];
  Shape target = x.shape();
  target[0] = inputs[2].ndim() == 1 ? inputs[2].shape()[0] : 0;
  // Converted once (y's own elements, before broadcasting), not per row.
  const Tensor yc = y.dtype() == x.dtype() ? y : y.AsType(x.dtype());
  std::optional<Tensor> broadcast;  // y itself when it has the shape already (no new view)
  if (yc.shape() != target) {
    broadcast = yc.BroadcastTo(target);
    if (!broadcast) {
      return Invalid(
          *this, absl::StrCat("y of shape ", ShapeToString(y.shape()),
                              " does not broadcast to x[idx] of shape ", ShapeToString(target)));
    }
  }
  Tensor out = attrs().inplace && x.is_contiguous() ? x : x.AsType(x.dtype());
  RETURN_IF_ERROR(ScatterRows(*this, out, broadcast ? *broadcast : yc, inputs[2], attrs().set));
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// x's shape.
absl::StatusOr<std::vector<ShapeVars>> AdvancedIncSubtensor1::InferShape(
    const Apply&, const std::vector<ShapeVars>& in) const {
  return std::vector<ShapeVars>{in[0]};
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
  return ApplyOp(OpPtr(std::make_shared<Subtensor>(SubtensorAttrs{entries})), inputs);
}

Var take(const Var& x, const Var& indices) {
  return ApplyOp(OpPtr(std::make_shared<AdvancedSubtensor1>()), {x, indices});
}

namespace {

Var IncOrSet(const Var& indexed, const Var& y, bool set) {
  if (!indexed.ok()) return indexed;
  if (!y.ok()) return y;
  const Apply* node = indexed->owner();
  OpPtr op;
  if (node != nullptr && node->op().Is<Subtensor>()) {
    op = std::make_shared<IncSubtensor>(
        IncSubtensorAttrs{static_cast<const Subtensor&>(node->op()).idx(), set});
  } else if (node != nullptr && node->op().Is<AdvancedSubtensor1>()) {
    op = std::make_shared<AdvancedIncSubtensor1>(AdvancedIncSubtensor1Attrs{set});
  } else if (node != nullptr && node->op().Is<AdvancedSubtensor>()) {
    op = std::make_shared<AdvancedIncSubtensor>(AdvancedIncSubtensorAttrs{
        .idx_list = node->op().As<AdvancedSubtensor>()->idx(), .set_instead_of_inc = set});
  } else {
    return Var(absl::InvalidArgumentError(
        absl::StrCat(set ? "set_subtensor" : "inc_subtensor", ": ", indexed->ToString(),
                     " is not the result of indexing (subtensor or take)")));
  }
  std::vector<Var> inputs = {node->inputs()[0], y};
  for (int i = 1; i < node->num_inputs(); ++i) inputs.push_back(node->inputs()[i]);
  return ApplyOp(op, inputs);
}

}  // namespace

Var set_subtensor(const Var& indexed, const Var& y) { return IncOrSet(indexed, y, true); }
Var inc_subtensor(const Var& indexed, const Var& y) { return IncOrSet(indexed, y, false); }

// --- Index lists on the wire -------------------------------------------------------------------

KILN_REGISTER_OP(Subtensor);
KILN_REGISTER_OP(IncSubtensor);
KILN_REGISTER_OP(AdvancedSubtensor1);
KILN_REGISTER_OP(AdvancedIncSubtensor1);

namespace op_decl {

AttrValue Codec<std::vector<IndexEntry>>::Encode(const std::vector<IndexEntry>& idx) {
  std::vector<int64_t> bits;
  for (const IndexEntry& e : idx) {
    bits.push_back(e.is_slice | e.has_start << 1 | e.has_stop << 2 | e.has_step << 3);
  }
  return bits;
}

absl::StatusOr<std::vector<IndexEntry>> Codec<std::vector<IndexEntry>>::Decode(
    const OpAttrs& a, const std::string& key) {
  ASSIGN_OR_RETURN(std::vector<int64_t> bits, a.Ints(key));
  if (bits.size() > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute '", key, "' has ", bits.size(), " entries, more than 64 dims"));
  }
  std::vector<IndexEntry> idx;
  for (int64_t b : bits) {
    if (b < 0 || b > 15 || (!(b & 1) && b != 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", key, "' has the bad entry ", b));
    }
    idx.push_back({(b & 1) != 0, (b & 2) != 0, (b & 4) != 0, (b & 8) != 0});
  }
  return idx;
}

std::string Codec<std::vector<IndexEntry>>::Repr(const std::vector<IndexEntry>& idx) {
  return absl::StrJoin(idx, ", ", [](std::string* out, const IndexEntry& e) {
    if (!e.is_slice) {
      absl::StrAppend(out, "int64");
      return;
    }
    absl::StrAppend(out, e.has_start ? "int64" : "", ":", e.has_stop ? "int64" : "", ":",
                    e.has_step ? "int64" : "");
  });
}

}  // namespace op_decl

}  // namespace kiln
