#include "core/grad/vectorize.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/inner_graph.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/ifelse.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"

namespace kiln {
namespace {

// 0, 1, ..., n - 1 shifted by `from`.
std::vector<int> Iota(int from, int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

// Batched x with `n` broadcastable dims inserted after the batch dim.
Var PadAfterBatch(const Var& x, int n) {
  if (n <= 0) return x;
  std::vector<int> order = {0};
  order.insert(order.end(), n, kX);
  for (int d : Iota(1, x.ndim() - 1)) order.push_back(d);
  return dimshuffle(x, order);
}

// Batched x with dims 0 and 1 swapped (and back).
Var SwapFirstTwo(const Var& x) {
  std::vector<int> order = {1, 0};
  for (int d : Iota(2, x.ndim() - 2)) order.push_back(d);
  return dimshuffle(x, order);
}

// Every output of `op` applied to `inputs`.
absl::StatusOr<std::vector<Var>> Outputs(const absl::StatusOr<OpPtr>& op,
                                         const std::vector<Var>& inputs) {
  if (!op.ok()) return op.status();
  std::vector<VariablePtr> ptrs;
  for (const Var& v : inputs) {
    ASSIGN_OR_RETURN(VariablePtr p, Unwrap(v));
    ptrs.push_back(std::move(p));
  }
  ASSIGN_OR_RETURN(ApplyPtr node, (*op)->MakeNode(std::move(ptrs)));
  std::vector<Var> outputs;
  for (const VariablePtr& o : node->outputs()) outputs.emplace_back(o);
  return outputs;
}

// A node's output in the batched graph: with the batch dim, or one value for every row (a shape).
struct Rows {
  Var var;
  bool batched = true;
};

// Every output of `op` applied to `inputs`, each batched (or the same for every row).
absl::StatusOr<std::vector<Rows>> Batched(const absl::StatusOr<OpPtr>& op,
                                          const std::vector<Var>& inputs, bool batched = true) {
  ASSIGN_OR_RETURN(std::vector<Var> outs, Outputs(op, inputs));
  std::vector<Rows> rows;
  for (Var& v : outs) rows.push_back({std::move(v), batched});
  return rows;
}

// One batched output, or its error.
absl::StatusOr<std::vector<Rows>> One(const Var& v) {
  if (!v.ok()) return v.status();
  return std::vector<Rows>{{v}};
}

// One output the same for every row, or its error.
absl::StatusOr<std::vector<Rows>> Shared(const Var& v) {
  if (!v.ok()) return v.status();
  return std::vector<Rows>{{v, false}};
}

absl::Status NoBatchedForm(const Apply& node, size_t input, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "vectorize: ", node.op().Name(), " has no batched form for input ", input, " (", why, ")"));
}

// Computes one node for every row of the batch: each input is either batched (a leading dim of
// the batch's length) or shared by all rows.
class Batcher {
 public:
  explicit Batcher(Var size) : size_(std::move(size)) {}

  // rows checked at run time to have the batch's length.
  Var SameLength(const Var& rows) const {
    std::vector<Var> inputs = {rows, size_};
    for (int d = 1; d < rows.ndim(); ++d) inputs.push_back(constant(int64_t{-1}));
    return ApplyOp(OpPtr(std::make_shared<SpecifyShape>()), inputs);
  }

  // x repeated for each row: (B,) + x.shape, x's static dims kept (a DimShuffle after the
  // rule may drop a broadcastable one).
  Var Repeat(const Var& x) const {
    std::vector<Var> dims = {size_};
    for (int d = 0; d < x.ndim(); ++d) dims.push_back(DimOf(x.ptr(), d));
    return alloc(x, dims);
  }

  absl::StatusOr<std::vector<Rows>> Node(const Apply& node, std::vector<Var> in,
                                         const std::vector<bool>& batched) const {
    const absl::string_view type = node.op().type_name();
    // Elementwise: the rows broadcast against the shared operands.
    if (type == "Elemwise" || type == "GradientOp") {
      for (size_t i = 0; i < in.size(); ++i) {
        if (!batched[i]) in[i] = expand_dims(in[i], 0);
      }
      return Batched(node.op_ptr(), in);
    }
    if (type == "DimShuffle") {
      std::vector<int> order = {0};
      for (int d : static_cast<const DimShuffle&>(node.op()).new_order()) {
        order.push_back(d == kX ? kX : d + 1);
      }
      return One(dimshuffle(in[0], order));
    }
    if (type == "Dot" || type == "MatMul" || type == "Dot22") return Product(in, batched);
    if (type == "Gemm" || type == "Gemv") return ScaledProduct(in, batched);
    if (type == "IfElse") return Choice(node, std::move(in), batched);
    if (type == "Print") return Batched(node.op_ptr(), in);  // prints the whole batch
    if (type == "Alloc") {
      RETURN_IF_ERROR(OnlyBatched(node, batched, {0}, "the shape"));
      std::vector<Var> dims = {size_};
      dims.insert(dims.end(), in.begin() + 1, in.end());
      return One(alloc(PadAfterBatch(in[0], static_cast<int>(dims.size()) - in[0].ndim()), dims));
    }
    if (type == "Reshape") {
      RETURN_IF_ERROR(OnlyBatched(node, batched, {0}, "the shape"));
      const Var dims = concatenate({make_vector({size_}), in[1]});
      const int ndim = node.outputs()[0]->tensor_type()->ndim() + 1;
      return Batched(OpPtr(std::make_shared<Reshape>(ndim)), {in[0], dims});
    }
    if (type == "Shape") {
      std::vector<Var> dims;
      for (int d = 1; d < in[0].ndim(); ++d) dims.push_back(shape_i(in[0], d));
      return Shared(make_vector(dims));
    }
    if (type == "Shape_i") {
      ASSIGN_OR_RETURN(int64_t i, node.op().Attrs().Int("i"));
      return Shared(shape_i(in[0], static_cast<int>(i) + 1));
    }
    if (type == "SpecifyShape") {
      RETURN_IF_ERROR(OnlyBatched(node, batched, {0}, "the shape"));
      in.insert(in.begin() + 1, constant(int64_t{-1}));
      return Batched(node.op_ptr(), in);
    }
    if (type == "MakeVector") {
      const DType dtype = node.outputs()[0]->tensor_type()->dtype();
      for (size_t i = 0; i < in.size(); ++i)
        in[i] = cast(batched[i] ? in[i] : Repeat(in[i]), dtype);
      return One(stack(in, 1));
    }
    if (type == "Subtensor" || type == "IncSubtensor") return Indexing(node, in, batched);
    if (type == "AdvancedSubtensor" || type == "AdvancedIncSubtensor") {
      return AdvancedIndexing(node, std::move(in), batched);
    }
    if (type == "AdvancedSubtensor1") {
      RETURN_IF_ERROR(OnlyBatched(node, batched, {0}, "the indices"));
      ASSIGN_OR_RETURN(std::vector<Var> rows, Outputs(node.op_ptr(), {SwapFirstTwo(in[0]), in[1]}));
      return One(SwapFirstTwo(rows[0]));
    }
    if (type == "AdvancedIncSubtensor1") {
      RETURN_IF_ERROR(OnlyBatched(node, batched, {0, 1}, "the indices"));
      const int x_ndim = node.inputs()[0]->tensor_type()->ndim();
      const Var x = SwapFirstTwo(batched[0] ? in[0] : Repeat(in[0]));
      Var y = in[1];
      if (batched[1]) {
        y = SwapFirstTwo(PadAfterBatch(y, x_ndim + 1 - y.ndim()));
      } else if (y.ndim() == x_ndim) {  // (k, ...) meets (k, B, ...)
        std::vector<int> order = {0, kX};
        for (int d : Iota(1, y.ndim() - 1)) order.push_back(d);
        y = dimshuffle(y, order);
      }
      ASSIGN_OR_RETURN(std::vector<Var> out, Outputs(node.op_ptr(), {x, y, in[2]}));
      return One(SwapFirstTwo(out[0]));
    }
    if (type == "Join" || type == "Split") return AlongAxisInput(node, std::move(in), batched);
    if (type == "CAReduce" || type == "MaxAndArgmax" || type == "Argmax" || type == "Softmax" ||
        type == "LogSoftmax" || type == "CumOp" || type == "SortOp" || type == "ArgSortOp" ||
        type == "Repeat") {
      RETURN_IF_ERROR(OnlyBatched(node, batched, {0}, "the repeats"));
      ASSIGN_OR_RETURN(OpAttrs attrs, ShiftedAxisAttrs(node));
      return Batched(MakeOp(type, attrs), in);
    }
    const size_t first = std::find(batched.begin(), batched.end(), true) - batched.begin();
    if (type == "ARange" || type == "Eye" || type == "Nonzero") {
      return NoBatchedForm(node, first, "the output's shape would differ between rows");
    }
    return NoBatchedForm(node, first, "no rule for this op");
  }

 private:
  // OK when only the inputs in `allowed` are batched.
  static absl::Status OnlyBatched(const Apply& node, const std::vector<bool>& batched,
                                  std::initializer_list<size_t> allowed, absl::string_view what) {
    for (size_t i = 0; i < batched.size(); ++i) {
      if (batched[i] && std::find(allowed.begin(), allowed.end(), i) == allowed.end()) {
        return NoBatchedForm(node, i, absl::StrCat(what, " would differ between rows"));
      }
    }
    return absl::OkStatus();
  }

  // The op's attributes with its axis attribute moved past the batch dim. An absent axis means
  // every axis (CAReduce) or the flattened input, which is the one axis of a vector.
  static absl::StatusOr<OpAttrs> ShiftedAxisAttrs(const Apply& node) {
    const OpAttrs old = node.op().Attrs();
    const int ndim = node.inputs()[0]->tensor_type()->ndim();
    OpAttrs attrs;
    for (const auto& [key, value] : old.values()) {
      if (key != "axis") attrs.Set(key, value);
    }
    if (old.Has("axis")) {
      if (absl::StatusOr<int64_t> axis = old.Int("axis"); axis.ok()) {
        attrs.Set("axis", *axis + 1);
      } else {
        ASSIGN_OR_RETURN(std::vector<int64_t> axes, old.Ints("axis"));
        for (int64_t& a : axes) ++a;
        attrs.Set("axis", axes);
      }
    } else if (node.op().Is<CAReduce>()) {
      std::vector<int64_t> axes(ndim);
      std::iota(axes.begin(), axes.end(), 1);
      attrs.Set("axis", axes);
    } else if (ndim <= 1) {
      attrs.Set("axis", int64_t{1});
    } else {
      return NoBatchedForm(node, 0, "axis None flattens the rows together");
    }
    return attrs;
  }

  // Dot and MatMul as one batched matmul: a batched vector becomes a row (or column) matrix so
  // that its batch dim is not taken for a matrix dim, and the extra dims are dropped after.
  absl::StatusOr<std::vector<Rows>> Product(std::vector<Var> in,
                                            const std::vector<bool>& batched) const {
    const bool a_row = batched[0] && in[0].ndim() == 2;
    const bool b_col = batched[1] && in[1].ndim() == 2;
    if (a_row) in[0] = dimshuffle(in[0], {0, kX, 1});
    if (b_col) in[1] = dimshuffle(in[1], {0, 1, kX});
    // Stacks of matrices broadcast right-aligned: a batched one gets dims after its batch dim so
    // that the batch dim stays in front of the other's stack dims.
    int rank = 0;
    for (int i = 0; i < 2; ++i) {
      if (in[i].ndim() >= 2) rank = std::max(rank, in[i].ndim() + (batched[i] ? 0 : 1));
    }
    for (int i = 0; i < 2; ++i) {
      if (batched[i] && in[i].ndim() >= 2) in[i] = PadAfterBatch(in[i], rank - in[i].ndim());
    }
    Var out = matmul(in[0], in[1]);
    if (!out.ok()) return out.status();
    if (!a_row && !b_col) return One(out);
    std::vector<int> keep;
    const int n = out.ndim();
    const int row_dim = b_col || in[1].ndim() >= 2 ? n - 2 : n - 1;
    for (int d = 0; d < n; ++d) {
      if ((a_row && d == row_dim) || (b_col && d == n - 1)) continue;
      keep.push_back(d);
    }
    return One(dimshuffle(out, keep));
  }

  // Gemm(z, a, x, y, b) = b*z + a*x@y and Gemv(y, a, A, x, b) = b*y + a*A@x as a batched
  // product and elementwise ops; b == 0 ignores z (even its NaNs), as BLAS and Aesara do.
  absl::StatusOr<std::vector<Rows>> ScaledProduct(const std::vector<Var>& in,
                                                  const std::vector<bool>& batched) const {
    Var product;
    if (batched[2] || batched[3]) {
      ASSIGN_OR_RETURN(std::vector<Rows> rows, Product({in[2], in[3]}, {batched[2], batched[3]}));
      product = rows[0].var;
    } else {
      product = expand_dims(dot(in[2], in[3]), 0);
    }
    if (!product.ok()) return product.status();
    const int rank = product.ndim();
    const Var z = Lift(in[0], batched[0], rank), a = Lift(in[1], batched[1], rank),
              b = Lift(in[4], batched[4], rank);
    const Var bz = b * z;
    return One(switch_(neq(b, constant(0.0)), bz, zeros_like(bz)) + a * product);
  }

  // IfElse: an unbatched condition still picks one list lazily, of batched branches (a value the
  // same for every row is repeated when the other branch's is batched); a batched condition picks
  // each row by switch, both branches computed, as PyTensor's vectorized ifelse.
  absl::StatusOr<std::vector<Rows>> Choice(const Apply& node, std::vector<Var> in,
                                           const std::vector<bool>& batched) const {
    const int n = static_cast<const IfElse&>(node.op()).n_outs();
    std::vector<Rows> rows(n);
    if (batched[0]) {
      for (int i = 0; i < n; ++i) {
        const Var& t = in[1 + i];
        const Var& e = in[1 + n + i];
        const int rank = t.ndim() + (batched[1 + i] ? 0 : 1);
        rows[i].var = switch_(PadAfterBatch(in[0], rank - 1), Lift(t, batched[1 + i], rank),
                              Lift(e, batched[1 + n + i], rank));
        if (!rows[i].var.ok()) return rows[i].var.status();
      }
      return rows;
    }
    for (int i = 0; i < n; ++i) {
      Var& t = in[1 + i];
      Var& e = in[1 + n + i];
      rows[i].batched = batched[1 + i] || batched[1 + n + i];
      if (rows[i].batched && !batched[1 + i]) t = Repeat(t);
      if (rows[i].batched && !batched[1 + n + i]) e = Repeat(e);
    }
    const std::vector<Var> outs =
        ifelse(in[0], std::vector<Var>(in.begin() + 1, in.begin() + 1 + n),
               std::vector<Var>(in.begin() + 1 + n, in.end()));
    if (static_cast<int>(outs.size()) != n) return outs[0].status();
    for (int i = 0; i < n; ++i) rows[i].var = outs[i];
    return rows;
  }

  // x as an operand of rank `rank` that broadcasts against the batch: a batched x with
  // broadcastable dims after its batch dim, another with broadcastable dims in front.
  static Var Lift(const Var& x, bool batched, int rank) {
    if (batched) return PadAfterBatch(x, rank - x.ndim());
    std::vector<int> order(rank - x.ndim(), kX);
    for (int d : Iota(0, x.ndim())) order.push_back(d);
    return dimshuffle(x, order);
  }

  // AdvancedSubtensor and AdvancedIncSubtensor with the batch dim moved last: dims after the
  // index list are taken whole after the indexed ones, whatever the arrays' placement, so the
  // same op keeps it last (y's batch dim last too, or a broadcastable one), then moved back.
  absl::StatusOr<std::vector<Rows>> AdvancedIndexing(const Apply& node, std::vector<Var> in,
                                                     const std::vector<bool>& batched) const {
    const bool inc = node.op().Is<AdvancedIncSubtensor>();
    RETURN_IF_ERROR(OnlyBatched(node, batched, {0, inc ? 1u : 0u}, "the indices"));
    auto batch_last = [](const Var& v) {
      std::vector<int> order = Iota(1, v.ndim() - 1);
      order.push_back(0);
      return dimshuffle(v, order);
    };
    in[0] = batch_last(batched[0] ? in[0] : Repeat(in[0]));
    if (inc && batched[1]) {
      in[1] = batch_last(in[1]);
    } else if (inc) {
      std::vector<int> order = Iota(0, in[1].ndim());
      order.push_back(kX);
      in[1] = dimshuffle(in[1], order);
    }
    ASSIGN_OR_RETURN(std::vector<Var> out, Outputs(node.op_ptr(), in));
    std::vector<int> back = {out[0].ndim() - 1};
    for (int d : Iota(0, out[0].ndim() - 1)) back.push_back(d);
    return One(dimshuffle(out[0], back));
  }

  // Subtensor and IncSubtensor with a full slice over the batch dim in front of the index list.
  absl::StatusOr<std::vector<Rows>> Indexing(const Apply& node, std::vector<Var> in,
                                             const std::vector<bool>& batched) const {
    const bool inc = node.op().Is<IncSubtensor>();
    RETURN_IF_ERROR(OnlyBatched(node, batched, {0, inc ? 1u : 0u}, "the indices"));
    std::vector<IndexEntry> idx = inc ? static_cast<const IncSubtensor&>(node.op()).idx()
                                      : static_cast<const Subtensor&>(node.op()).idx();
    IndexEntry all;
    all.is_slice = true;
    idx.insert(idx.begin(), all);
    if (!inc) return Batched(OpPtr(std::make_shared<Subtensor>(SubtensorAttrs{idx})), in);
    if (!batched[0]) in[0] = Repeat(in[0]);
    if (batched[1]) {
      // y broadcasts to x[idx]: its batch dim must meet x's, so pad it to x[idx]'s rank.
      int picked = 0;
      for (const IndexEntry& e : idx) picked += e.is_slice ? 0 : 1;
      in[1] = PadAfterBatch(in[1], in[0].ndim() - picked - in[1].ndim());
    }
    IncSubtensorAttrs attrs = static_cast<const IncSubtensor&>(node.op()).attrs();
    attrs.idx_list = std::move(idx);
    attrs.inplace = false;
    return Batched(OpPtr(std::make_shared<IncSubtensor>(std::move(attrs))), in);
  }

  // Join(axis, *xs) and Split(x, axis, splits) along a constant axis moved past the batch dim.
  absl::StatusOr<std::vector<Rows>> AlongAxisInput(const Apply& node, std::vector<Var> in,
                                                   const std::vector<bool>& batched) const {
    const bool join = node.op().Is<Join>();
    const size_t axis_input = join ? 0 : 1;
    std::optional<int64_t> axis = ConstantInt(node.inputs()[axis_input]);
    if (!axis) return NoBatchedForm(node, axis_input, "the axis is not a constant");
    if (join) {
      RETURN_IF_ERROR(batched[0] ? NoBatchedForm(node, 0, "the axis would differ between rows")
                                 : absl::OkStatus());
      for (size_t i = 1; i < in.size(); ++i) {
        if (!batched[i]) in[i] = Repeat(in[i]);
      }
    } else {
      RETURN_IF_ERROR(OnlyBatched(node, batched, {0}, "the split sizes"));
    }
    const int ndim = node.inputs()[join ? 1 : 0]->tensor_type()->ndim();
    in[axis_input] = constant(*axis < 0 ? *axis + ndim + 1 : *axis + 1);
    return Batched(node.op_ptr(), in);
  }

  Var size_;
};

// Batches the nodes above some outputs: `changed` maps each variable that differs from the
// original graph to its batched form (or its value for every row).
class Walker {
 public:
  Walker(const Batcher& batcher, NodeBudget* budget) : batcher_(batcher), budget_(budget) {}

  std::unordered_map<const Variable*, Rows> changed;

  // Every node above `outs` not yet walked, in order; an OpFromGraph reading a batched value is
  // inlined and its copy walked in turn (`depth` nesting deep).
  absl::Status Walk(const std::vector<VariablePtr>& outs, int depth = 0) {
    const auto stop = [&](const Variable* v) {
      return changed.count(v) > 0 || (v->owner() != nullptr && walked_.count(v->owner()) > 0);
    };
    for (Apply* node : ToposortUntil(outs, stop)) {
      walked_.insert(node);
      std::vector<Var> in;
      std::vector<bool> batched;
      bool any_changed = false;
      for (const VariablePtr& input : node->inputs()) {
        auto it = changed.find(input.get());
        any_changed |= it != changed.end();
        batched.push_back(it != changed.end() && it->second.batched);
        in.push_back(it != changed.end() ? it->second.var : Var(input));
      }
      if (!any_changed) continue;
      const bool any_batched = std::find(batched.begin(), batched.end(), true) != batched.end();
      const HasInnerGraph* inner = InnerGraphOf(node->op());
      if (any_batched && inner != nullptr && inner->inner_use() == HasInnerGraph::Use::kCall) {
        RETURN_IF_ERROR(Inline(*node, depth));
        continue;
      }
      // A node reading only values the same for every row (shapes) is rebuilt on them as is.
      absl::StatusOr<std::vector<Rows>> rows = !any_batched ? Batched(node->op_ptr(), in, false)
                                               : inner != nullptr
                                                   ? Loop(*node, std::move(in), batched, depth)
                                                   : batcher_.Node(*node, std::move(in), batched);
      if (!rows.ok()) return rows.status();
      std::vector<Var> made;
      for (size_t k = 0; k < rows->size(); ++k) {
        if (!(*rows)[k].var.ok()) return (*rows)[k].var.status();
        changed[node->outputs()[k].get()] = (*rows)[k];
        made.push_back((*rows)[k].var);
      }
      if (budget_ != nullptr) RETURN_IF_ERROR(budget_->Count(made));
    }
    return absl::OkStatus();
  }

 private:
  // The node replaced by a copy of its inner graph on its inputs, which is then batched.
  absl::Status Inline(const Apply& node, int depth) {
    const HasInnerGraph* op = InnerGraphOf(node.op());
    if (op == nullptr || depth >= kMaxInnerGraphDepth) {
      return NoBatchedForm(node, 0, "its inner graph nests too deep");
    }
    std::vector<std::pair<VariablePtr, VariablePtr>> replace;
    for (size_t i = 0; i < op->inner().inputs.size(); ++i) {
      replace.push_back({op->inner().inputs[i], node.inputs()[i]});
    }
    ASSIGN_OR_RETURN(std::vector<VariablePtr> outs, CloneReplace(op->inner().outputs, replace));
    RETURN_IF_ERROR(Walk(outs, depth + 1));
    for (size_t k = 0; k < outs.size(); ++k) {
      // An inner output that reads no batched value stays the node's own output.
      auto it = changed.find(outs[k].get());
      if (it != changed.end()) changed[node.outputs()[k].get()] = it->second;
    }
    return absl::OkStatus();
  }

  // Scan over batched values: one loop carrying the batch. A batched sequence steps along its
  // second dim, a state reading a batched value (or starting from one) carries the batch, and the
  // body is batched in turn; the number of steps and an until condition must be one for all rows.
  absl::StatusOr<std::vector<Rows>> Loop(const Apply& node, std::vector<Var> in,
                                         const std::vector<bool>& batched, int depth) {
    const HasInnerGraph* loop = InnerGraphOf(node.op());
    if (loop == nullptr || depth >= kMaxInnerGraphDepth) {
      return NoBatchedForm(node, 0, "its inner graph nests too deep");
    }
    if (batched[0]) return NoBatchedForm(node, 0, "the number of steps would differ between rows");
    OpAttrs attrs = node.op().Attrs();
    ASSIGN_OR_RETURN(const std::vector<int64_t> seq_counts, attrs.Ints("seq_tap_counts"));
    ASSIGN_OR_RETURN(const std::vector<int64_t> keep_last, attrs.Ints("state_keep_last"));
    ASSIGN_OR_RETURN(const int64_t as_while, attrs.Int("as_while"));
    const InnerGraph& g = loop->inner();
    const int first_state = 1 + static_cast<int>(seq_counts.size());
    const int n_states = static_cast<int>(keep_last.size());
    // Which states carry the batch: those starting from a batched value, then, until none is
    // added, those whose new value reads a batched inner input.
    std::vector<bool> carries(n_states);
    for (int j = 0; j < n_states; ++j) carries[j] = batched[first_state + j];
    const auto inner_batched = [&](size_t i) {
      const int outer = loop->OuterInputOf(static_cast<int>(i));
      const bool state = outer >= first_state && outer < first_state + n_states;
      return state ? static_cast<bool>(carries[outer - first_state]) : batched[outer];
    };
    std::unordered_set<const Variable*> reads;  // inner values reading a batched inner input
    for (bool grew = true; grew;) {
      reads.clear();
      for (size_t i = 0; i < g.inputs.size(); ++i) {
        if (inner_batched(i)) reads.insert(g.inputs[i].get());
      }
      for (Apply* n : IoToposort(g.inputs, g.outputs)) {
        for (const VariablePtr& v : n->inputs()) {
          if (!reads.count(v.get())) continue;
          for (const VariablePtr& o : n->outputs()) reads.insert(o.get());
          break;
        }
      }
      grew = false;
      for (int j = 0; j < n_states; ++j) {
        if (!carries[j] && reads.count(g.outputs[j].get())) grew = carries[j] = true;
      }
    }
    if (as_while && reads.count(g.outputs.back().get())) {
      const size_t first_batched =
          std::find(batched.begin(), batched.end(), true) - batched.begin();
      return NoBatchedForm(node, first_batched, "the until condition would differ between rows");
    }
    // The body on batched inner inputs: (B,) + each one's type.
    std::vector<VariablePtr> inner_in = g.inputs;
    std::unordered_map<const Variable*, Rows> inner_changed;
    Var first;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      if (!inner_batched(i)) continue;
      const TensorType& t = *g.inputs[i]->tensor_type();
      StaticShape shape = {std::nullopt};
      shape.insert(shape.end(), t.shape().begin(), t.shape().end());
      inner_in[i] = Variable::Make(TensorType::Make(t.dtype(), std::move(shape)));
      inner_changed[g.inputs[i].get()] = {Var(inner_in[i])};
      if (!first.ok()) first = Var(inner_in[i]);
    }
    if (!first.ok()) return NoBatchedForm(node, 0, "no inner input reads the batch");
    const Batcher inner_batcher(shape_i(first, 0));
    Walker body(inner_batcher, budget_);
    body.changed = std::move(inner_changed);
    RETURN_IF_ERROR(body.Walk(g.outputs, depth + 1));
    std::vector<VariablePtr> inner_out;
    std::vector<bool> out_batched;
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      auto it = body.changed.find(g.outputs[o].get());
      Var v = it == body.changed.end() ? Var(g.outputs[o]) : it->second.var;
      bool b = it != body.changed.end() && it->second.batched;
      if (o < carries.size() && carries[o] && !b) v = inner_batcher.Repeat(v);
      if (o < carries.size()) b = carries[o];
      ASSIGN_OR_RETURN(VariablePtr p, Unwrap(v));
      inner_out.push_back(std::move(p));
      out_batched.push_back(b);
    }
    if (budget_ != nullptr) {
      RETURN_IF_ERROR(budget_->Count(std::vector<Var>(inner_out.begin(), inner_out.end())));
    }
    ASSIGN_OR_RETURN(std::string text, EncodeInnerGraph(inner_in, inner_out));
    attrs.Set("inner", std::move(text));
    // Outside: a batched sequence or state is stepped along its second dim.
    for (int k = 1; k < first_state; ++k) {
      if (batched[k]) in[k] = SwapFirstTwo(in[k]);
    }
    for (int j = 0; j < n_states; ++j) {
      Var& init = in[first_state + j];
      if (carries[j]) init = SwapFirstTwo(batched[first_state + j] ? init : batcher_.Repeat(init));
    }
    ASSIGN_OR_RETURN(std::vector<Var> outs, Outputs(MakeOp("Scan", attrs), in));
    std::vector<Rows> rows;
    for (size_t o = 0; o < outs.size(); ++o) {
      const bool whole = o >= keep_last.size() || !keep_last[o];  // every step, not the last
      if (!out_batched[o]) {
        rows.push_back({outs[o], false});
      } else {
        rows.push_back({whole ? SwapFirstTwo(outs[o]) : outs[o]});
      }
    }
    return rows;
  }

  const Batcher& batcher_;
  NodeBudget* budget_;
  std::unordered_set<const Apply*> walked_;
};

}  // namespace

absl::StatusOr<std::vector<Var>> vectorize(const std::vector<Var>& outputs,
                                           const std::vector<std::pair<Var, Var>>& replace,
                                           const VectorizeOptions& options) {
  if (replace.empty()) return absl::InvalidArgumentError("vectorize: nothing to batch over");
  NodeBudget own(options.max_nodes, options.interrupt, "vectorize: the batched graph");
  NodeBudget* budget = options.node_budget != nullptr ? options.node_budget
                       : own.active()                 ? &own
                                                      : nullptr;
  if (budget != nullptr) {
    std::vector<Var> existing = outputs;
    for (const auto& [v, rows] : replace) {
      existing.push_back(v);
      existing.push_back(rows);
    }
    budget->Existing(existing);
  }
  std::unordered_map<const Variable*, Rows> changed;
  for (const auto& [v, rows] : replace) {
    if (!v.ok()) return v.status();
    if (!rows.ok()) return rows.status();
    if (v->tensor_type() == nullptr || rows->tensor_type() == nullptr ||
        rows.ndim() != v.ndim() + 1 || rows.dtype() != v.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("vectorize: ", rows->type()->ToString(),
                                                     " is not a batch of ", v->type()->ToString(),
                                                     " (one more leading dim, the same dtype)"));
    }
    changed[v.ptr().get()] = {rows};
  }
  const Batcher batcher(shape_i(replace[0].second, 0));
  for (size_t k = 1; k < replace.size(); ++k) {  // every batch as long as the first
    changed[replace[k].first.ptr().get()] = {batcher.SameLength(replace[k].second)};
  }
  Walker walker(batcher, budget);
  walker.changed = std::move(changed);
  std::vector<VariablePtr> outs;
  for (const Var& o : outputs) {
    ASSIGN_OR_RETURN(VariablePtr p, Unwrap(o));
    outs.push_back(std::move(p));
  }
  RETURN_IF_ERROR(walker.Walk(outs));
  std::vector<Var> result;
  for (const VariablePtr& o : outs) {
    auto it = walker.changed.find(o.get());
    if (it == walker.changed.end()) {
      result.push_back(batcher.Repeat(Var(o)));
    } else {
      result.push_back(it->second.batched ? it->second.var : batcher.Repeat(it->second.var));
    }
    if (!result.back().ok()) return result.back().status();
  }
  if (budget != nullptr) RETURN_IF_ERROR(budget->Count(result));
  return result;
}

}  // namespace kiln
