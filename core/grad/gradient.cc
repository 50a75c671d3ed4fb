#include "core/grad/gradient.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "core/grad/vectorize.h"
#include "core/tensor/check.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/ops/alloc.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {
namespace {

// Aesara's discrete dtypes: bool and the integers.
bool IsDiscrete(DType d) { return IsBool(d) || IsInteger(d); }

// The dtype of a tensor variable, or nullopt for NullType and DisconnectedType variables.
std::optional<DType> DTypeOfVar(const Variable& v) {
  const TensorType* t = v.tensor_type();
  if (t == nullptr) return std::nullopt;
  return t->dtype();
}

// Aesara's _float_ones_like: ones like x, in x's dtype when it is a float, else floatX.
Var FloatOnesLike(const Var& x) {
  return ones_like(x, IsFloat(x.dtype()) ? x.dtype() : DType::kFloat64);
}

// The nodes that use each variable on a path from wrt to the outputs, with the input positions;
// entries keep the order in which Aesara's depth-first walk meets them (gradient terms are summed
// in that order).
struct Consumers {
  std::vector<std::pair<Apply*, std::vector<int>>> uses;
};

class GradBuilder {
 public:
  explicit GradBuilder(const GradOptions& options)
      : options_(options),
        own_budget_(options.max_nodes, options.interrupt),
        budget_(options.node_budget != nullptr ? options.node_budget
                : options.max_nodes > 0        ? &own_budget_
                                               : nullptr) {}

  absl::StatusOr<std::vector<Var>> Run(const Var& cost, const std::vector<Var>& wrt);

 private:
  const std::vector<std::vector<bool>>& Pattern(Apply* node) {
    auto it = patterns_.find(node);
    if (it == patterns_.end()) {
      it = patterns_.emplace(node, node->op().ConnectionPattern(*node)).first;
    }
    return it->second;
  }
  void AccountFor(const std::vector<VariablePtr>& outputs,
                  const std::unordered_set<const Variable*>& constants);
  void KeepOnlyWrtDescendants(const std::vector<Var>& wrt);
  absl::Status HandleDisconnected(const Variable& v);
  absl::StatusOr<Var> GradOf(const Variable* v);
  absl::Status ComputeTerms(Apply* node);

  const GradOptions& options_;
  NodeBudget own_budget_;
  NodeBudget* budget_;  // counts the nodes the gradient adds, when there is a limit
  std::unordered_map<Apply*, std::vector<std::vector<bool>>> patterns_;
  std::unordered_map<const Variable*, Consumers> consumers_;
  std::unordered_map<const Variable*, Var> grads_;
  std::unordered_map<Apply*, std::vector<Var>> terms_;
  std::string cost_name_;
};

// Aesara's _populate_var_to_app_to_idx, first half: every true ancestor of the outputs, walked
// depth first without recursion, not entering consider_constant variables.
void GradBuilder::AccountFor(const std::vector<VariablePtr>& outputs,
                             const std::unordered_set<const Variable*>& constants) {
  std::unordered_set<const Variable*> accounted;
  struct Frame {
    Variable* var;
    int next_input;
  };
  std::vector<Frame> stack;
  auto push = [&](Variable* v) {
    if (!accounted.insert(v).second) return;
    if (constants.count(v) || v->owner() == nullptr) return;
    stack.push_back({v, 0});
  };
  for (const VariablePtr& out : outputs) {
    push(out.get());
    while (!stack.empty()) {
      Frame& f = stack.back();
      Apply* node = f.var->owner();
      if (f.next_input == node->num_inputs()) {
        stack.pop_back();
        continue;
      }
      const int i = f.next_input++;
      if (!Pattern(node)[i][f.var->index()]) continue;
      Variable* input = node->inputs()[i].get();
      auto& uses = consumers_[input].uses;
      auto it = std::find_if(uses.begin(), uses.end(), [&](auto& u) { return u.first == node; });
      if (it == uses.end()) {
        uses.push_back({node, {}});
        it = uses.end() - 1;
      }
      if (std::find(it->second.begin(), it->second.end(), i) == it->second.end()) {
        it->second.push_back(i);
      }
      push(input);
    }
  }
}

// The second half: keep only variables that have some wrt as a true ancestor.
void GradBuilder::KeepOnlyWrtDescendants(const std::vector<Var>& wrt) {
  std::unordered_set<const Variable*> visited;
  std::vector<const Variable*> stack;
  for (const Var& w : wrt) stack.push_back(w.ptr().get());
  while (!stack.empty()) {
    const Variable* v = stack.back();
    stack.pop_back();
    auto it = consumers_.find(v);
    if (it == consumers_.end() || !visited.insert(v).second) continue;
    for (const auto& [node, positions] : it->second.uses) {
      const auto& pattern = Pattern(node);
      for (int idx : positions) {
        for (int o = 0; o < node->num_outputs(); ++o) {
          if (pattern[idx][o]) stack.push_back(node->output_ptr(o));
        }
      }
    }
  }
  for (auto it = consumers_.begin(); it != consumers_.end();) {
    it = visited.count(it->first) ? std::next(it) : consumers_.erase(it);
  }
}

absl::Status GradBuilder::HandleDisconnected(const Variable& v) {
  const std::string message = absl::StrCat(
      "grad method was asked to compute the gradient with respect to a variable that is not part "
      "of the computational graph of the cost, or is used only by a non-differentiable operator: ",
      v.ToString());
  switch (options_.disconnected_inputs) {
    case DisconnectedInputs::kIgnore:
      return absl::OkStatus();
    case DisconnectedInputs::kWarn:
      if (options_.warnings != nullptr) {
        options_.warnings->push_back(message);
      } else {
        std::cerr << "UserWarning: " << message << "\n";
      }
      return absl::OkStatus();
    case DisconnectedInputs::kRaise:
      return absl::InvalidArgumentError(absl::StrCat("DisconnectedInputError: ", message));
  }
  return absl::OkStatus();
}

// The total gradient of v: the sum of its terms (a NullType term wins), or DisconnectedType.
absl::StatusOr<Var> GradBuilder::GradOf(const Variable* v) {
  if (auto it = grads_.find(v); it != grads_.end()) return it->second;
  Var total = disconnected_type();
  if (auto it = consumers_.find(v); it != consumers_.end()) {
    std::optional<Var> null_term, sum;
    for (const auto& [node, positions] : it->second.uses) {
      auto terms = terms_.find(node);
      KILN_CHECK(terms != terms_.end()) << "node visited out of order";
      for (int idx : positions) {
        const Var& term = terms->second[idx];
        if (IsNullType(*term)) {
          if (!null_term) null_term = term;
          continue;
        }
        if (IsDisconnected(*term)) continue;
        if (term.ndim() != v->tensor_type()->ndim()) {
          return absl::InvalidArgumentError(
              absl::StrCat(node->op().Name(), ".grad returned a term with ", term.ndim(),
                           " dimensions, but ", v->tensor_type()->ndim(), " are required."));
        }
        sum = sum ? add(*sum, term) : term;
        if (!sum->ok()) return sum->status();
      }
    }
    if (null_term) {
      total = *null_term;
    } else if (sum) {
      total = *sum;
      if (options_.add_names && !cost_name_.empty() && !v->name().empty()) {
        total->set_name(absl::StrCat("(d", cost_name_, "/d", v->name(), ")"));
      }
    }
  }
  grads_.emplace(v, total);
  return total;
}

// Aesara's access_term_cache: the gradient terms of node's inputs.
absl::Status GradBuilder::ComputeTerms(Apply* node) {
  const int n_in = node->num_inputs(), n_out = node->num_outputs();
  std::vector<Var> output_grads;
  for (int o = 0; o < n_out; ++o) {
    ASSIGN_OR_RETURN(Var g, GradOf(node->output_ptr(o)));
    output_grads.push_back(g);
  }
  const auto& pattern = Pattern(node);
  std::vector<bool> output_connected(n_out), output_is_null(n_out);
  for (int o = 0; o < n_out; ++o) {
    output_connected[o] = !IsDisconnected(*output_grads[o]);
    output_is_null[o] = IsNullType(*output_grads[o]);
  }
  std::vector<bool> input_connected(n_in), only_null(n_in);
  for (int i = 0; i < n_in; ++i) {
    bool connected = false, to_non_null = false;
    for (int o = 0; o < n_out; ++o) {
      if (!pattern[i][o] || !output_connected[o]) continue;
      connected = true;
      to_non_null |= !output_is_null[o];
    }
    input_connected[i] = connected;
    only_null[i] = !to_non_null;
  }
  std::vector<Var> input_grads;
  if (std::find(input_connected.begin(), input_connected.end(), true) == input_connected.end()) {
    for (int i = 0; i < n_in; ++i) input_grads.push_back(disconnected_type());
  } else if (std::find(only_null.begin(), only_null.end(), false) == only_null.end()) {
    // Only NullType gradients reach the inputs: each gets the first one it is connected to, so
    // that the error says why (Aesara's null_type() here has lost the reason).
    for (int i = 0; i < n_in; ++i) {
      Var g = disconnected_type();
      for (int o = n_out - 1; o >= 0; --o) {
        if (pattern[i][o] && output_connected[o]) g = output_grads[o];
      }
      input_grads.push_back(g);
    }
  } else {
    // Output gradients in their output's float dtype (integer outputs keep theirs).
    std::vector<Var> cast_grads;
    for (int o = 0; o < n_out; ++o) {
      const std::optional<DType> od = DTypeOfVar(*node->output_ptr(o));
      const std::optional<DType> gd = DTypeOfVar(*output_grads[o]);
      if (od && !IsDiscrete(*od) && gd && *od != *gd) {
        cast_grads.push_back(cast(output_grads[o], *od));
      } else {
        cast_grads.push_back(output_grads[o]);
      }
    }
    input_grads = node->op().LOp(*node, cast_grads);
    if (budget_ != nullptr) {
      RETURN_IF_ERROR(budget_->Count(cast_grads));
      RETURN_IF_ERROR(budget_->Count(input_grads));
    }
    if (static_cast<int>(input_grads.size()) != n_in) {
      return absl::InternalError(absl::StrCat(node->op().Name(), ".L_op returned ",
                                              input_grads.size(), " gradients for ", n_in,
                                              " inputs"));
    }
    for (int i = 0; i < n_in; ++i) {
      if (!input_grads[i].ok()) return input_grads[i].status();
      // An input feeding a NullType output gradient has a NullType gradient too.
      for (int o = 0; o < n_out; ++o) {
        if (output_is_null[o] && pattern[i][o] && !IsDisconnected(*input_grads[i])) {
          input_grads[i] = output_grads[o];
        }
      }
    }
  }
  for (int i = 0; i < n_in; ++i) {
    const Var& term = input_grads[i];
    const bool disconnected = IsDisconnected(*term);
    if (!disconnected && !IsNullType(*term) && !IsFloat(term.dtype()) && !IsComplex(term.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->op().Name(), ".grad illegally  returned an integer-valued variable. (Input index ",
          i, ", dtype ", DTypeName(term.dtype()), ")"));
    }
    if (!disconnected && !input_connected[i]) {
      return absl::InternalError(
          absl::StrCat(node->op().Name(), ".grad returned ", term->ToString(), " of type ",
                       term->type()->ToString(), " for input ", i,
                       ". Expected DisconnectedType instance based on  the output of the op's "
                       "connection_pattern method."));
    }
    if (disconnected && input_connected[i]) {
      return absl::InternalError(
          absl::StrCat(node->op().Name(), ".grad returned DisconnectedType for input ", i,
                       ". Its connection_pattern method does not allow this."));
    }
  }
  terms_.emplace(node, std::move(input_grads));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Var>> GradBuilder::Run(const Var& cost, const std::vector<Var>& wrt) {
  const bool has_cost = cost.ok();
  if (!has_cost && options_.known_grads.empty()) {
    if (!cost.status().ok() && cost.status().code() != absl::StatusCode::kFailedPrecondition) {
      return cost.status();
    }
    return absl::InvalidArgumentError("cost and known_grads can't both be None.");
  }
  if (has_cost) {
    if (const NullType* null = AsNullType(*cost)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Can't differentiate a NaN cost. Cost is NaN because ", null->why_null()));
    }
    if (cost->tensor_type() == nullptr || cost.ndim() != 0) {
      return absl::InvalidArgumentError("Cost must be a scalar.");
    }
    cost_name_ = cost->name();
  }
  for (const Var& w : wrt) {
    if (!w.ok()) return w.status();
  }
  std::vector<VariablePtr> outputs;
  if (has_cost) outputs.push_back(cost.ptr());
  for (const auto& [var, g] : options_.known_grads) {
    if (!var.ok()) return var.status();
    if (!g.ok()) return g.status();
    outputs.push_back(var.ptr());
  }
  std::unordered_set<const Variable*> constants;
  for (const Var& c : options_.consider_constant) {
    if (!c.ok()) return c.status();
    constants.insert(c.ptr().get());
  }
  if (budget_ != nullptr) {  // the graph being differentiated is not counted, only what grad adds
    std::vector<Var> existing(outputs.begin(), outputs.end());
    existing.insert(existing.end(), wrt.begin(), wrt.end());
    existing.insert(existing.end(), options_.consider_constant.begin(),
                    options_.consider_constant.end());
    for (const auto& [var, g] : options_.known_grads) existing.push_back(g);
    budget_->Existing(existing);
  }
  AccountFor(outputs, constants);
  KeepOnlyWrtDescendants(wrt);

  bool cost_known = false;
  for (const auto& [var, g] : options_.known_grads) {
    const std::optional<DType> d = DTypeOfVar(*g);
    if (d && !IsFloat(*d)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Gradients must always be NullType, DisconnectedType, or continuous, but grad was "
          "given a known_grad of type ",
          g->type()->ToString()));
    }
    grads_.insert_or_assign(var.ptr().get(), g);
    cost_known |= has_cost && var.ptr() == cost.ptr();
  }
  if (has_cost && !cost_known) grads_.emplace(cost.ptr().get(), FloatOnesLike(cost));

  for (const Var& w : wrt) {
    const Variable* v = w.ptr().get();
    if (!consumers_.count(v) && !(has_cost && v == cost.ptr().get()) && !grads_.count(v)) {
      RETURN_IF_ERROR(HandleDisconnected(*v));
      grads_.emplace(v, disconnected_type());
    }
  }

  // Every node using a relevant variable, from the cost back towards wrt.
  std::unordered_set<const Apply*> needed;
  for (const auto& [v, c] : consumers_) {
    for (const auto& use : c.uses) needed.insert(use.first);
  }
  const std::vector<Apply*> order =
      ToposortUntil(outputs, [&](const Variable* v) { return constants.count(v) > 0; });
  uint64_t visits = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (options_.interrupt && ++visits % 256 == 0) {
      RETURN_IF_ERROR(options_.interrupt());
    }
    if (!needed.count(*it)) continue;
    RETURN_IF_ERROR(ComputeTerms(*it));
  }

  std::vector<Var> result;
  for (const Var& w : wrt) {
    ASSIGN_OR_RETURN(Var g, GradOf(w.ptr().get()));
    Var r = g;
    if (const NullType* null = AsNullType(*r)) {
      if (options_.null_gradients == NullGradients::kRaise) {
        return absl::InvalidArgumentError(
            absl::StrCat("`grad` encountered a NaN. ", null->why_null()));
      }
    }
    if (IsDisconnected(*r)) {
      RETURN_IF_ERROR(HandleDisconnected(*r));
      switch (options_.return_disconnected) {
        case ReturnDisconnected::kZero:
          r = FloatZerosLike(w);
          break;
        case ReturnDisconnected::kNone:
          r = Var();
          break;
        case ReturnDisconnected::kDisconnected:
          break;
      }
    }
    result.push_back(r);
  }
  if (budget_ != nullptr) RETURN_IF_ERROR(budget_->Count(result));
  return result;
}

}  // namespace

absl::StatusOr<std::vector<Var>> grad(const Var& cost, const std::vector<Var>& wrt,
                                      const GradOptions& options) {
  GradBuilder builder(options);
  return builder.Run(cost, wrt);
}

Var grad(const Var& cost, const Var& wrt, const GradOptions& options) {
  absl::StatusOr<std::vector<Var>> g = grad(cost, std::vector<Var>{wrt}, options);
  if (!g.ok()) return Var(g.status());
  return (*g)[0];
}

}  // namespace kiln

namespace kiln {

absl::StatusOr<std::vector<Var>> Lop(const std::vector<Var>& f, const std::vector<Var>& wrt,
                                     const std::vector<Var>& eval_points,
                                     const GradOptions& options) {
  if (f.size() != eval_points.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Lop: ", f.size(), " expressions but ", eval_points.size(), " eval_points"));
  }
  GradOptions lop_options = options;
  lop_options.known_grads.clear();
  for (size_t i = 0; i < f.size(); ++i) lop_options.known_grads.push_back({f[i], eval_points[i]});
  return grad(Var(), wrt, lop_options);
}

absl::StatusOr<std::vector<Var>> Rop(const std::vector<Var>& f, const std::vector<Var>& wrt,
                                     const std::vector<Var>& eval_points) {
  if (wrt.size() != eval_points.size()) {
    return absl::InvalidArgumentError("`wrt` must be the same length as `eval_points`.");
  }
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (!wrt[i].ok()) return wrt[i].status();
    if (!eval_points[i].ok()) return eval_points[i].status();
    if (wrt[i].ndim() != eval_points[i].ndim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Elements ", i, " of `wrt` and `eval_point` have mismatched dimensionalities: ",
          wrt[i].ndim(), " and ", eval_points[i].ndim()));
    }
  }
  // J v = d/du (u^T J v) = d/du (Lop(f, wrt, u) . v): Lop is linear in u, so u may be any
  // variable of f's type; zeros like f keeps the result free of new inputs.
  std::vector<Var> result;
  for (const Var& fi : f) {
    if (!fi.ok()) return fi.status();
    const Var u = zeros_like(fi, IsFloat(fi.dtype()) ? fi.dtype() : DType::kFloat64);
    GradOptions options;
    options.disconnected_inputs = DisconnectedInputs::kIgnore;
    ASSIGN_OR_RETURN(std::vector<Var> vjp, Lop({fi}, wrt, {u}, options));
    Var inner;
    for (size_t i = 0; i < wrt.size(); ++i) {
      const Var term = sum((vjp)[i] * eval_points[i]);
      inner = inner.ok() ? inner + term : term;
    }
    GradOptions outer;
    outer.disconnected_inputs = DisconnectedInputs::kIgnore;
    Var jv = grad(inner, u, outer);
    if (!jv.ok()) return jv.status();
    result.push_back(jv);
  }
  return result;
}

namespace {

// The Jacobian of a vector of static length n as n gradients, one per element, stacked.
absl::StatusOr<std::vector<Var>> StackedRowGradients(const Var& expression, int64_t n,
                                                     const std::vector<Var>& wrt,
                                                     const GradOptions& options) {
  std::vector<std::vector<Var>> rows(wrt.size());
  for (int64_t i = 0; i < n; ++i) {
    // Bounded by options.max_nodes (through its node_budget) and stopped by the interrupt.
    if (options.interrupt) RETURN_IF_ERROR(options.interrupt());
    ASSIGN_OR_RETURN(std::vector<Var> g, grad(subtensor(expression, {Index(i)}), wrt, options));
    for (size_t k = 0; k < wrt.size(); ++k) rows[k].push_back(g[k]);
  }
  std::vector<Var> result;
  for (size_t k = 0; k < wrt.size(); ++k) {
    if (n > 0) {
      result.push_back(stack(rows[k]));
      continue;
    }
    std::vector<Var> dims = {constant(int64_t{0})};  // an empty expression: (0,) + wrt.shape
    for (int d = 0; d < wrt[k].ndim(); ++d) dims.push_back(shape_i(wrt[k], d));
    result.push_back(zeros(dims, IsFloat(wrt[k].dtype()) ? wrt[k].dtype() : DType::kFloat64));
  }
  if (options.node_budget != nullptr) RETURN_IF_ERROR(options.node_budget->Count(result));
  return result;
}

}  // namespace

absl::StatusOr<std::vector<Var>> jacobian(const Var& expression, const std::vector<Var>& wrt,
                                          const GradOptions& options) {
  if (!expression.ok()) return expression.status();
  if (expression->tensor_type() == nullptr) {
    return absl::InvalidArgumentError("jacobian expects a Variable as `expression`");
  }
  if (expression.ndim() == 0) return grad(expression, wrt, options);
  if (expression.ndim() > 1) {
    return absl::InvalidArgumentError(
        "jacobian expects a 1 dimensional variable as `expression`. If not use flatten to make "
        "it a vector");
  }
  if (!options.known_grads.empty()) {
    return absl::InvalidArgumentError(
        "jacobian: known_grads cannot be given (the cotangents are the identity's rows)");
  }
  // One count for the backward pass, its batching and any fallback.
  NodeBudget own_budget(options.max_nodes, options.interrupt);
  GradOptions counted = options;
  if (counted.node_budget == nullptr && options.max_nodes > 0) counted.node_budget = &own_budget;
  // One backward pass for a cotangent u, batched over the rows of the identity: row i of the
  // result is e_i^T d(expression)/d(wrt).
  const DType dtype = IsFloat(expression.dtype()) ? expression.dtype() : DType::kFloat64;
  const Var u = tensor(dtype, expression.type().shape(), "jacobian_cotangent");
  ASSIGN_OR_RETURN(std::vector<Var> result, Lop({expression}, wrt, {u}, counted));
  // Only tensors are batched: None, DisconnectedType and NullType results stay as grad gave them.
  std::vector<size_t> tensors;
  std::vector<Var> vjp;
  for (size_t k = 0; k < result.size(); ++k) {
    if (!result[k].ok() || result[k]->tensor_type() == nullptr) continue;
    tensors.push_back(k);
    vjp.push_back(result[k]);
  }
  if (vjp.empty()) return result;
  const StaticDim length = expression.type().shape()[0];
  const Var n = length ? constant(*length) : shape_i(expression, 0);
  absl::StatusOr<std::vector<Var>> rows =
      vectorize(vjp, {{u, eye(n, n, constant(int64_t{0}), dtype)}},
                {.interrupt = options.interrupt, .node_budget = counted.node_budget});
  if (!rows.ok() && length && rows.status().code() == absl::StatusCode::kInvalidArgument) {
    // An op without a batched form, and a static length: one gradient per element, stacked.
    std::vector<Var> wrt_tensors;
    for (size_t k : tensors) wrt_tensors.push_back(wrt[k]);
    rows = StackedRowGradients(expression, *length, wrt_tensors, counted);
  }
  if (!rows.ok()) return rows.status();
  for (size_t i = 0; i < tensors.size(); ++i) result[tensors[i]] = (*rows)[i];
  return result;
}

absl::StatusOr<std::vector<Var>> hessian(const Var& cost, const std::vector<Var>& wrt,
                                         const GradOptions& options) {
  if (!cost.ok()) return cost.status();
  if (cost->tensor_type() == nullptr) {
    return absl::InvalidArgumentError("hessian expects a Variable as `cost`");
  }
  if (cost.ndim() != 0) {
    return absl::InvalidArgumentError("hessian expects a 0 dimensional variable as `cost`");
  }
  // One count for every gradient and Jacobian.
  NodeBudget own_budget(options.max_nodes, options.interrupt);
  GradOptions counted = options;
  if (counted.node_budget == nullptr && options.max_nodes > 0) counted.node_budget = &own_budget;
  std::vector<Var> result;
  for (const Var& w : wrt) {
    if (!w.ok()) return w.status();
    if (w.ndim() != 1) {
      return absl::InvalidArgumentError(
          "hessian expects a (list of) 1 dimensional variable as `wrt`");
    }
    const Var g = grad(cost, w, counted);
    if (!g.ok()) return g.status();
    GradOptions second = counted;
    second.disconnected_inputs = DisconnectedInputs::kIgnore;
    ASSIGN_OR_RETURN(std::vector<Var> h, jacobian(g, {w}, second));
    result.push_back(h[0]);
  }
  return result;
}

}  // namespace kiln
