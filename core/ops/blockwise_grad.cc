// Blockwise's gradient (the core op's, batched by VectorizeGraph, summed over the batch dims an
// input broadcast along) and VectorizeGraph itself.
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/traversal.h"
#include "core/ops/blockwise.h"
#include "core/ops/broadcast_to.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape_infer.h"

namespace kiln {
namespace {

// A signature of distinct dim names for an op whose inputs and outputs have these ranks:
// "(i0,i1),(i2)->(o0)".
std::string DefaultSignature(const Apply& node) {
  std::string sig;
  int name = 0;
  auto arg = [&](const Variable& v) {
    std::string s = "(";
    const int ndim = v.tensor_type() ? v.tensor_type()->ndim() : 0;
    for (int d = 0; d < ndim; ++d) absl::StrAppend(&s, d ? "," : "", "d", name++);
    return s + ")";
  };
  for (int i = 0; i < node.num_inputs(); ++i) {
    absl::StrAppend(&sig, i ? "," : "", arg(*node.inputs()[i]));
  }
  sig += "->";
  for (int o = 0; o < node.num_outputs(); ++o) {
    absl::StrAppend(&sig, o ? "," : "", arg(*node.output_ptr(o)));
  }
  return sig;
}

// v with `extra` new broadcastable dims inserted after its first `lead` dims.
absl::StatusOr<VariablePtr> InsertDims(const VariablePtr& v, int lead, int extra) {
  if (extra == 0) return v;
  const int ndim = v->tensor_type()->ndim();
  std::vector<int> order;
  for (int d = 0; d < lead; ++d) order.push_back(d);
  for (int k = 0; k < extra; ++k) order.push_back(kX);
  for (int d = lead; d < ndim; ++d) order.push_back(d);
  return Unwrap(dimshuffle(Var(v), std::move(order)));
}

// The batched outputs of `node` given its inputs' batched replacements `in` (`lead[i]` new
// leading dims on input i).
absl::StatusOr<std::vector<VariablePtr>> BatchNode(const Apply& node, std::vector<VariablePtr> in,
                                                   const std::vector<int>& lead) {
  const Op& op = node.op();
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.inputs()[i]->tensor_type() == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("vectorize: ", op.Name(), " has input ", i, " of type ",
                       node.inputs()[i]->type()->ToString(), ", which cannot be batched"));
    }
  }
  if (const DimShuffle* ds = op.As<DimShuffle>(); ds != nullptr && in.size() == 1) {
    std::vector<int> order;
    for (int d = 0; d < lead[0]; ++d) order.push_back(d);
    for (int o : ds->new_order()) order.push_back(o == kX ? kX : o + lead[0]);
    absl::StatusOr<VariablePtr> out = Unwrap(dimshuffle(Var(in[0]), std::move(order)));
    if (!out.ok()) return out.status();
    return std::vector<VariablePtr>{*out};
  }
  std::shared_ptr<const Blockwise> bw;
  if (const Blockwise* b = op.As<Blockwise>(); b != nullptr) {
    bw = std::static_pointer_cast<const Blockwise>(node.op_ptr());
  } else if (!op.Is<Elemwise>()) {
    absl::StatusOr<std::shared_ptr<const Blockwise>> made =
        Blockwise::Make(node.op_ptr(), DefaultSignature(node));
    if (!made.ok()) return made.status();
    bw = *std::move(made);
  }
  // Every input's old dims broadcast in one frame: pad them (after the new dims) to it.
  std::vector<int> frame(in.size());
  int old_batch = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const int old_ndim = node.inputs()[i]->tensor_type()->ndim();
    const int core = bw ? static_cast<int>(bw->signature().inputs[i].size()) : 0;
    old_batch = std::max(old_batch, old_ndim - core);
  }
  for (size_t i = 0; i < in.size(); ++i) {
    const int old_ndim = node.inputs()[i]->tensor_type()->ndim();
    const int core = bw ? static_cast<int>(bw->signature().inputs[i].size()) : 0;
    absl::StatusOr<VariablePtr> padded = InsertDims(in[i], lead[i], old_batch - (old_ndim - core));
    if (!padded.ok()) return padded.status();
    in[i] = *std::move(padded);
  }
  const Op& apply = bw ? static_cast<const Op&>(*bw) : op;
  absl::StatusOr<ApplyPtr> made = apply.MakeNode(std::move(in));
  if (!made.ok()) return made.status();
  return (*made)->outputs();
}

}  // namespace

absl::StatusOr<std::vector<VariablePtr>> VectorizeGraph(
    const std::vector<VariablePtr>& outputs,
    const std::vector<std::pair<VariablePtr, VariablePtr>>& replace) {
  std::unordered_map<const Variable*, VariablePtr> memo;
  for (const auto& [from, to] : replace) {
    const TensorType* a = from->tensor_type();
    const TensorType* b = to->tensor_type();
    if (a == nullptr || b == nullptr || b->ndim() < a->ndim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "vectorize_graph: ", to->type()->ToString(), " cannot replace ", from->type()->ToString(),
          ": a batched variable has the core variable's dims last"));
    }
    memo[from.get()] = to;
  }
  const std::vector<Apply*> nodes =
      ToposortUntil(outputs, [&](const Variable* v) { return memo.count(v) > 0; });
  for (Apply* node : nodes) {
    std::vector<VariablePtr> in;
    std::vector<int> lead;
    bool changed = false;
    for (const VariablePtr& v : node->inputs()) {
      auto it = memo.find(v.get());
      const VariablePtr& now = it == memo.end() ? v : it->second;
      changed = changed || now != v;
      const TensorType* t = now->tensor_type();
      lead.push_back(t && v->tensor_type() ? t->ndim() - v->tensor_type()->ndim() : 0);
      in.push_back(now);
    }
    if (!changed) continue;
    absl::StatusOr<std::vector<VariablePtr>> out = BatchNode(*node, std::move(in), lead);
    if (!out.ok()) return out.status();
    for (int o = 0; o < node->num_outputs(); ++o) memo[node->output_ptr(o)] = (*out)[o];
  }
  std::vector<VariablePtr> result;
  for (const VariablePtr& v : outputs) {
    auto it = memo.find(v.get());
    result.push_back(it == memo.end() ? v : it->second);
  }
  return result;
}

// The core op's gradient on core stand-ins of the node's inputs, outputs and output gradients,
// batched by VectorizeGraph; each input's gradient summed over the batch dims it broadcast along
// (and broadcast to its batch shape where the gradient has none).
std::vector<Var> Blockwise::LOp(const Apply& node, const std::vector<Var>& output_grads) const {
  const int n_in = node.num_inputs();
  auto fail = [&](const absl::Status& st) { return std::vector<Var>(n_in, Var(st)); };
  absl::StatusOr<ApplyPtr> core = CoreNode(node.inputs());
  if (!core.ok()) return fail(core.status());
  std::vector<std::pair<VariablePtr, VariablePtr>> replace;
  for (int i = 0; i < n_in; ++i) {
    if ((*core)->inputs()[i] != node.inputs()[i]) {
      replace.push_back({(*core)->inputs()[i], node.inputs()[i]});
    }
  }
  for (int o = 0; o < node.num_outputs(); ++o) {
    replace.push_back({(*core)->output(o), node.output(o)});
  }
  std::vector<Var> core_gz;
  for (int o = 0; o < node.num_outputs(); ++o) {
    const Var& g = output_grads[o];
    if (!g.ok()) return fail(g.status());
    if (g->tensor_type() == nullptr) {
      core_gz.push_back(g);  // DisconnectedType or NullType: nothing to batch
      continue;
    }
    const TensorType* out = (*core)->output_ptr(o)->tensor_type();
    const int core_ndim = out->ndim();
    if (g.ndim() < core_ndim) {
      return fail(Invalid(*this, absl::StrCat("output gradient ", o, " has type ",
                                              g->type()->ToString(), ", of too few dims")));
    }
    StaticShape shape(g.type().shape().end() - core_ndim, g.type().shape().end());
    VariablePtr stand_in = Variable::Make(TensorType::Make(g.dtype(), std::move(shape)));
    replace.push_back({stand_in, g.ptr()});
    core_gz.push_back(Var(stand_in));
  }
  const std::vector<Var> core_grads = core_op()->LOp(**core, core_gz);
  std::vector<Var> grads(n_in);
  std::vector<VariablePtr> batched_in;
  std::vector<int> which;
  for (int i = 0; i < n_in; ++i) {
    if (!core_grads[i].ok()) return fail(core_grads[i].status());
    if (core_grads[i]->tensor_type() == nullptr) {
      grads[i] = core_grads[i];
    } else {
      batched_in.push_back(core_grads[i].ptr());
      which.push_back(i);
    }
  }
  absl::StatusOr<std::vector<VariablePtr>> batched = VectorizeGraph(batched_in, replace);
  if (!batched.ok()) {
    return fail(Invalid(*this, absl::StrCat("its core op's gradient cannot be batched: ",
                                            batched.status().message())));
  }
  for (size_t k = 0; k < which.size(); ++k) {
    const int i = which[k];
    const VariablePtr& x = node.inputs()[i];
    const int core_ndim = static_cast<int>(signature_.inputs[i].size());
    const int x_batch = x->tensor_type()->ndim() - core_ndim;
    Var g((*batched)[k]);
    int g_batch = g.ndim() - core_ndim;
    // Sum the leading dims the input does not have.
    if (g_batch > x_batch) {
      std::vector<int> axes;
      for (int d = 0; d < g_batch - x_batch; ++d) axes.push_back(d);
      g = sum(g, Axes(axes));
      g_batch = x_batch;
    }
    // Sum (keeping them) the dims along which the input broadcast.
    if (g_batch == x_batch) {
      std::vector<int> axes;
      for (int d = 0; d < x_batch; ++d) {
        if (x->tensor_type()->shape()[d] == 1 && g.type().shape()[d] != 1) axes.push_back(d);
      }
      if (!axes.empty()) g = sum(g, Axes(axes), true);
    } else {
      // A gradient with fewer batch dims is the same for every item: broadcast it.
      std::vector<Var> shape;
      for (const VariablePtr& d : ShapeOf(x)) shape.push_back(Var(d));
      g = broadcast_to(g, shape);
    }
    grads[i] = g;
  }
  return grads;
}

}  // namespace kiln
