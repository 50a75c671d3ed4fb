// AdvancedSubtensor and AdvancedIncSubtensor: the index list's wire form, type and shape
// inference, gradients and the builders. The kernels are in advanced_indexing_kernels.cc.
#include "core/ops/advanced_indexing.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/grad_util.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(AdvancedSubtensor);
KILN_REGISTER_OP(AdvancedIncSubtensor);

namespace {

int InputsOf(const AdvIndexEntry& e) {
  switch (e.kind) {
    case AdvIndexEntry::kTensor:
      return 1;
    case AdvIndexEntry::kSlice:
      return e.has_start + e.has_stop + e.has_step;
    case AdvIndexEntry::kNewAxis:
      return 0;
  }
  return 0;
}

// The checked index inputs of a node (from `first` on) and the static type of x[idx]: the
// arrays' broadcast dims (1 where every array has 1, unknown elsewhere; a mask's dims one unknown
// dim), at the first array when the arrays are adjacent, else first; unknown dims for slices and
// for the dims after the list, 1 for new axes: Aesara's make_node, which sees x's dims only as 1
// or symbolic.
absl::StatusOr<StaticShape> IndexedType(const Op& op, const std::vector<AdvIndexEntry>& idx,
                                        const std::vector<VariablePtr>& inputs, size_t first) {
  size_t expected = first;
  for (const AdvIndexEntry& e : idx) expected += InputsOf(e);
  if (inputs.size() != expected) {
    return Invalid(op, absl::StrCat("expects ", expected, " inputs for its index list of ",
                                    idx.size(), " entries, got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->tensor_type() == nullptr) {
      return Invalid(op, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                      ", which is not a TensorType"));
    }
  }
  const TensorType& x = *inputs[0]->tensor_type();
  StaticShape basic;                     // the dims of slices and new axes, in order
  std::vector<StaticShape> arrays;       // the arrays' shapes (a mask: one unknown dim)
  int adv_at = -1, last_adv_entry = -1;  // where the arrays' dims go among `basic`
  bool adjacent = true;
  size_t next = first;
  int axis = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    const AdvIndexEntry& e = idx[k];
    if (e.kind == AdvIndexEntry::kNewAxis) {
      basic.push_back(1);
      continue;
    }
    if (e.kind == AdvIndexEntry::kSlice) {
      for (int b = 0; b < InputsOf(e); ++b, ++next) {
        const TensorType& t = *inputs[next]->tensor_type();
        if (t.ndim() != 0 || t.dtype() != DType::kInt64) {
          return Invalid(op, absl::StrCat("input ", next, " has type ", t.ToString(),
                                          " but a slice bound is an int64 scalar"));
        }
      }
      basic.push_back(std::nullopt);
      ++axis;
      continue;
    }
    const TensorType& t = *inputs[next]->tensor_type();
    if (!IsInteger(t.dtype()) && t.dtype() != DType::kBool) {
      return Invalid(op, absl::StrCat("input ", next, " has type ", t.ToString(),
                                      ": an index must be integers or a boolean mask"));
    }
    if (t.dtype() == DType::kBool) {
      if (t.ndim() == 0) {
        return Invalid(op, absl::StrCat("input ", next,
                                        " is a 0-d boolean index, which Kiln "
                                        "does not support (use numpy.newaxis or an integer)"));
      }
      for (int j = 0; j < t.ndim() && axis + j < x.ndim(); ++j) {
        const StaticDim m = t.shape()[j], n = x.shape()[axis + j];
        if (m && n && *m != *n) {
          return Invalid(op, absl::StrCat("boolean index did not match indexed array along "
                                          "dimension ",
                                          axis + j, "; dimension is ", *n,
                                          " but corresponding boolean dimension is ", *m));
        }
      }
      arrays.push_back({std::nullopt});
      axis += t.ndim();
    } else {
      arrays.push_back(t.shape());
      ++axis;
    }
    if (adv_at < 0) {
      adv_at = static_cast<int>(basic.size());
    } else if (last_adv_entry != static_cast<int>(k) - 1) {
      adjacent = false;
    }
    last_adv_entry = static_cast<int>(k);
    ++next;
  }
  if (axis > x.ndim()) {
    return Invalid(
        op, absl::StrCat("too many indices for ", x.ToString(), ": ", axis, " dims are indexed"));
  }
  size_t adv_ndim = 0;
  for (const StaticShape& a : arrays) adv_ndim = std::max(adv_ndim, a.size());
  StaticShape adv(adv_ndim, StaticDim(1));
  for (const StaticShape& a : arrays) {
    for (size_t j = 0; j < a.size(); ++j) {
      StaticDim& d = adv[adv_ndim - a.size() + j];
      if (a[j] != StaticDim(1)) d = std::nullopt;
    }
  }
  for (int d = axis; d < x.ndim(); ++d) basic.push_back(std::nullopt);
  const size_t at = adv_at < 0 ? 0 : (adjacent ? adv_at : 0);
  basic.insert(basic.begin() + at, adv.begin(), adv.end());
  return basic;
}

// Only x (and y) feed the values; the indices place them.
std::vector<std::vector<bool>> Pattern(const Apply& node, int values) {
  std::vector<std::vector<bool>> pattern(node.num_inputs(), {false});
  for (int i = 0; i < values; ++i) pattern[i] = {true};
  return pattern;
}

std::vector<Var> IndexInputs(const Apply& node, int first) {
  std::vector<Var> out;
  for (int i = first; i < node.num_inputs(); ++i) out.emplace_back(node.inputs()[i]);
  return out;
}

Var Build(OpPtr op, std::vector<Var> head, const std::vector<Var>& rest) {
  head.insert(head.end(), rest.begin(), rest.end());
  return ApplyOp(std::move(op), head);
}

}  // namespace

// --- AdvancedSubtensor ------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> AdvancedSubtensor::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.empty()) return Invalid(*this, "expects x and its index inputs, got no input");
  ASSIGN_OR_RETURN(StaticShape shape, IndexedType(*this, idx(), inputs, 1));
  const DType dtype = inputs[0]->tensor_type()->dtype();
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(dtype, shape)});
}

// The arrays' broadcast dims (BroadcastDim of each column of their shapes), 1 for new axes, x's
// dims after the list, and Shape_i of the output for slices; with a boolean mask, whose count of
// True elements no shape gives, every dim is Shape_i of the output (Aesara raises ShapeError
// and its ShapeFeature does the same).
absl::StatusOr<std::vector<ShapeVars>> AdvancedSubtensor::InferShape(
    const Apply& node, const std::vector<ShapeVars>& in) const {
  const VariablePtr out = node.output(0);
  const int out_ndim = out->tensor_type()->ndim();
  ShapeVars dims(out_ndim);
  std::vector<const ShapeVars*> arrays;
  std::vector<VariablePtr> basic;  // nullptr: a slice's dim
  int adv_at = -1, last = -1, axis = 0;
  bool adjacent = true, mask = false;
  size_t next = 1;
  for (size_t k = 0; k < idx().size(); ++k) {
    const AdvIndexEntry& e = idx()[k];
    if (e.kind == AdvIndexEntry::kNewAxis) {
      basic.push_back(ConstDim(1));
    } else if (e.kind == AdvIndexEntry::kSlice) {
      basic.push_back(nullptr);
      next += InputsOf(e);
      ++axis;
    } else {
      mask = mask || node.inputs()[next]->tensor_type()->dtype() == DType::kBool;
      arrays.push_back(&in[next++]);
      ++axis;
      if (adv_at < 0) {
        adv_at = static_cast<int>(basic.size());
      } else if (last != static_cast<int>(k) - 1) {
        adjacent = false;
      }
      last = static_cast<int>(k);
    }
  }
  if (mask) {
    for (int d = 0; d < out_ndim; ++d) dims[d] = DimOf(out, d);
    return std::vector<ShapeVars>{dims};
  }
  for (int d = axis; d < static_cast<int>(in[0].size()); ++d) basic.push_back(in[0][d]);
  size_t adv_ndim = 0;
  for (const ShapeVars* a : arrays) adv_ndim = std::max(adv_ndim, a->size());
  std::vector<VariablePtr> adv;
  for (size_t j = 0; j < adv_ndim; ++j) {
    std::vector<VariablePtr> column;
    for (const ShapeVars* a : arrays) {
      if (a->size() + j >= adv_ndim) column.push_back((*a)[a->size() + j - adv_ndim]);
    }
    adv.push_back(BroadcastDim(column));
  }
  const size_t at = adv_at < 0 || !adjacent ? 0 : adv_at;
  basic.insert(basic.begin() + at, adv.begin(), adv.end());
  for (int d = 0; d < out_ndim; ++d) dims[d] = basic[d] ? basic[d] : DimOf(out, d);
  return std::vector<ShapeVars>{dims};
}

std::vector<std::vector<bool>> AdvancedSubtensor::ConnectionPattern(const Apply& node) const {
  return Pattern(node, 1);
}

// Aesara's AdvancedSubtensor.grad: gz added into zeros at the same indices (repeated indices
// accumulate), zeros of floatX for a discrete x; the indices are disconnected.
std::vector<Var> AdvancedSubtensor::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  std::vector<Var> grads;
  if (IsDiscreteVar(x)) {
    grads.push_back(FloatZerosLike(x));
  } else {
    grads.push_back(
        Build(std::make_shared<AdvancedIncSubtensor>(AdvancedIncSubtensorAttrs{.idx_list = idx()}),
              {zeros_like(x), g[0]}, IndexInputs(node, 1)));
  }
  for (int i = 1; i < node.num_inputs(); ++i) grads.push_back(disconnected_type());
  return grads;
}

// --- AdvancedIncSubtensor ---------------------------------------------------------------------

std::string AdvancedIncSubtensor::Name() const {
  return absl::StrCat("AdvancedIncSubtensor{inplace=", attrs().inplace ? "True" : "False",
                      ",  set_instead_of_inc=", attrs().set_instead_of_inc ? "True" : "False", "}");
}

// x's dtype; its dims of static size 1 stay 1, the others unknown (Aesara's make_node).
absl::StatusOr<ApplyPtr> AdvancedIncSubtensor::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() < 2) {
    return Invalid(
        *this, absl::StrCat("expects x, y and the index inputs, got ", inputs.size(), " inputs"));
  }
  RETURN_IF_ERROR(IndexedType(*this, idx(), inputs, 2).status());
  const TensorType* x = inputs[0]->tensor_type();
  const TensorType* y = inputs[1]->tensor_type();
  if (PromoteTypes(x->dtype(), y->dtype()) != x->dtype()) {
    return Invalid(*this, absl::StrCat("y has type ", y->ToString(), ", which cannot be stored ",
                                       "in x of type ", x->ToString(), " without loss"));
  }
  StaticShape shape;
  for (const StaticDim& d : x->shape()) {
    shape.push_back(d == StaticDim(1) ? StaticDim(1) : std::nullopt);
  }
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(x->dtype(), shape)});
}

// x's shape.
absl::StatusOr<std::vector<ShapeVars>> AdvancedIncSubtensor::InferShape(
    const Apply&, const std::vector<ShapeVars>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

std::vector<std::vector<bool>> AdvancedIncSubtensor::ConnectionPattern(const Apply& node) const {
  return Pattern(node, 2);
}

// Aesara's AdvancedIncSubtensor.grad: x's gradient is gz (zeroed at the indices for a set), y's
// gz read at the indices and summed over the dims y was broadcast along; zeros of floatX for a
// discrete x; the indices are disconnected.
std::vector<Var> AdvancedIncSubtensor::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]), y(node.inputs()[1]);
  const std::vector<Var> index = IndexInputs(node, 2);
  std::vector<Var> grads;
  if (IsDiscreteVar(x)) {
    grads = {FloatZerosLike(x), IsDiscreteVar(y) ? FloatZerosLike(y) : zeros_like(y)};
  } else {
    const Var gx = attrs().set_instead_of_inc
                       ? Build(std::make_shared<AdvancedIncSubtensor>(AdvancedIncSubtensorAttrs{
                                   .idx_list = idx(), .set_instead_of_inc = true}),
                               {g[0], zeros_like(y)}, index)
                       : g[0];
    const Var gy =
        Build(std::make_shared<AdvancedSubtensor>(AdvancedSubtensorAttrs{idx()}), {g[0]}, index);
    grads = {gx, SumToShapeOf(gy, y)};
  }
  for (size_t i = 0; i < index.size(); ++i) grads.push_back(disconnected_type());
  return grads;
}

// --- Builders ---------------------------------------------------------------------------------

AdvIndex::AdvIndex(int64_t v) : tensor(scalar_constant(v, DType::kInt64)) {}

AdvIndex AdvIndex::NewAxis() {
  AdvIndex i(Var{});
  i.tensor.reset();
  i.entry.kind = AdvIndexEntry::kNewAxis;
  return i;
}

AdvIndex AdvIndex::FullSlice() { return SliceOf(std::nullopt, std::nullopt, std::nullopt); }

AdvIndex AdvIndex::SliceOf(std::optional<Var> start, std::optional<Var> stop,
                           std::optional<Var> step) {
  AdvIndex i = NewAxis();
  i.entry.kind = AdvIndexEntry::kSlice;
  i.entry.has_start = start.has_value();
  i.entry.has_stop = stop.has_value();
  i.entry.has_step = step.has_value();
  for (std::optional<Var>* b : {&start, &stop, &step}) {
    if (*b) i.bounds.push_back(**b);
  }
  return i;
}

namespace {

// The index list and the index inputs of idx.
std::vector<AdvIndexEntry> Entries(const std::vector<AdvIndex>& idx, std::vector<Var>& inputs) {
  std::vector<AdvIndexEntry> entries;
  for (const AdvIndex& i : idx) {
    entries.push_back(i.entry);
    if (i.tensor) inputs.push_back(*i.tensor);
    inputs.insert(inputs.end(), i.bounds.begin(), i.bounds.end());
  }
  return entries;
}

}  // namespace

Var advanced_subtensor(const Var& x, const std::vector<AdvIndex>& idx) {
  std::vector<Var> inputs = {x};
  std::vector<AdvIndexEntry> entries = Entries(idx, inputs);
  return ApplyOp(std::make_shared<AdvancedSubtensor>(AdvancedSubtensorAttrs{entries}), inputs);
}

Var advanced_inc_subtensor(const Var& x, const Var& y, const std::vector<AdvIndex>& idx, bool set,
                           bool ignore_duplicates) {
  std::vector<Var> inputs = {x, y};
  std::vector<AdvIndexEntry> entries = Entries(idx, inputs);
  return ApplyOp(
      std::make_shared<AdvancedIncSubtensor>(AdvancedIncSubtensorAttrs{
          .idx_list = entries, .set_instead_of_inc = set, .ignore_duplicates = ignore_duplicates}),
      inputs);
}

// --- The index list on the wire ---------------------------------------------------------------

namespace op_decl {

AttrValue Codec<std::vector<AdvIndexEntry>>::Encode(const std::vector<AdvIndexEntry>& idx) {
  std::vector<int64_t> codes;
  for (const AdvIndexEntry& e : idx) {
    switch (e.kind) {
      case AdvIndexEntry::kTensor:
        codes.push_back(0);
        break;
      case AdvIndexEntry::kSlice:
        codes.push_back(1 | e.has_start << 1 | e.has_stop << 2 | e.has_step << 3);
        break;
      case AdvIndexEntry::kNewAxis:
        codes.push_back(16);
        break;
    }
  }
  return codes;
}

absl::StatusOr<std::vector<AdvIndexEntry>> Codec<std::vector<AdvIndexEntry>>::Decode(
    const OpAttrs& a, const std::string& key) {
  ASSIGN_OR_RETURN(std::vector<int64_t> codes, a.Ints(key));
  if (codes.size() > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute '", key, "' has ", codes.size(), " entries, more than 64"));
  }
  std::vector<AdvIndexEntry> idx;
  for (int64_t c : codes) {
    AdvIndexEntry e;
    if (c == 16) {
      e.kind = AdvIndexEntry::kNewAxis;
    } else if (c >= 1 && c <= 15 && (c & 1)) {
      e = {AdvIndexEntry::kSlice, (c & 2) != 0, (c & 4) != 0, (c & 8) != 0};
    } else if (c != 0) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", key, "' has the bad entry ", c,
                                                     " (0: a tensor, odd up to 15: a slice, "
                                                     "16: a new axis)"));
    }
    idx.push_back(e);
  }
  return idx;
}

std::string Codec<std::vector<AdvIndexEntry>>::Repr(const std::vector<AdvIndexEntry>& idx) {
  const std::vector<int64_t> codes = std::get<std::vector<int64_t>>(Encode(idx));
  return absl::StrCat("(", absl::StrJoin(codes, ", "), ")");
}

}  // namespace op_decl

}  // namespace kiln
