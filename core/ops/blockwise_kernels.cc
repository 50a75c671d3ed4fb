// Blockwise's kernel: the core op's batched kernel (batch_kernel.h) when it has one, else its
// Perform on views of each batch item's inputs (no copies), the results copied into the outputs.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ops/batch_kernel.h"
#include "core/ops/blockwise.h"
#include "core/ops/memory_check.h"
#include "core/ops/op_util.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// "(2, 3)".
std::string ShapeText(std::span<const int64_t> shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

// The batched outputs (batch_shape, then each output's core shape), allocated once their sizes
// pass the tensor limit and, together, the call's memory budget: a batch too large for the call
// is refused before any item runs, with the op and the shapes named.
absl::Status AllocateOutputs(const Blockwise& op, const Apply& node, const Shape& batch_shape,
                             const std::vector<Shape>& core_shapes, std::vector<Tensor>& outputs) {
  std::vector<Shape> shapes;
  std::vector<std::string> words;
  int64_t bytes = 0;
  for (size_t o = 0; o < core_shapes.size(); ++o) {
    Shape shape = batch_shape;
    shape.insert(shape.end(), core_shapes[o].begin(), core_shapes[o].end());
    const DType dtype = node.output_ptr(static_cast<int>(o))->tensor_type()->dtype();
    RETURN_IF_ERROR(CheckOutputShape(op, shape, dtype));
    bytes += ShapeSize(shape) * DTypeSize(dtype);  // each at most 2^46: no overflow
    words.push_back(absl::StrCat(ShapeText(shape), " ", DTypeName(dtype)));
    shapes.push_back(std::move(shape));
  }
  RETURN_IF_ERROR(CheckBytesFit(bytes, [&] {
    return absl::StrCat(op.Name(), ": the outputs ", absl::StrJoin(words, ", "));
  }));
  for (size_t o = 0; o < shapes.size(); ++o) {
    outputs[o] = Tensor::Empty(node.output_ptr(static_cast<int>(o))->tensor_type()->dtype(),
                               std::move(shapes[o]));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Blockwise::Perform(const Apply& node, std::span<const Tensor> inputs,
                                std::vector<Tensor>& outputs) const {
  const size_t n_in = inputs.size();
  if (n_in != signature_.inputs.size()) return Invalid(*this, "wrong number of inputs");
  int batch = 0;
  std::vector<int> core_ndim(n_in), batch_ndim(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    core_ndim[i] = static_cast<int>(signature_.inputs[i].size());
    batch_ndim[i] = inputs[i].ndim() - core_ndim[i];
    if (batch_ndim[i] < 0) {
      return Invalid(*this, absl::StrCat("input ", i, " has shape ", ShapeText(inputs[i].shape()),
                                         " but its core dims ", signature_.ToString(), " need ",
                                         core_ndim[i]));
    }
    batch = std::max(batch, batch_ndim[i]);
  }
  // The broadcast batch shape.
  Shape batch_shape(batch, 1);
  for (size_t i = 0; i < n_in; ++i) {
    for (int d = 0; d < batch_ndim[i]; ++d) {
      const int p = batch - batch_ndim[i] + d;
      const int64_t s = inputs[i].shape()[d];
      if (s == batch_shape[p] || s == 1) continue;
      if (batch_shape[p] != 1) {
        return Invalid(
            *this,
            absl::StrCat("the batch dims of input ", i, " (shape ", ShapeText(inputs[i].shape()),
                         ") do not broadcast with the others' ", ShapeText(batch_shape)));
      }
      batch_shape[p] = s;
    }
  }
  // As PyTensor: a batch dim broadcasts at run time only when its type says it is 1.
  for (size_t i = 0; i < n_in; ++i) {
    const TensorType* t = node.inputs()[i]->tensor_type();
    for (int d = 0; d < batch_ndim[i] && t != nullptr && t->ndim() == inputs[i].ndim(); ++d) {
      const int p = batch - batch_ndim[i] + d;
      if (inputs[i].shape()[d] == 1 && batch_shape[p] != 1 && t->shape()[d] != 1) {
        return Invalid(*this, absl::StrCat("input ", i, " has batch dim ", d,
                                           " of length 1 at run time but its type ", t->ToString(),
                                           " does not say it broadcasts (the others have ",
                                           batch_shape[p], ")"));
      }
    }
  }
  // Core dims of one name agree.
  std::vector<std::pair<std::string, std::pair<size_t, int64_t>>> sizes;
  for (size_t i = 0; i < n_in; ++i) {
    for (int j = 0; j < core_ndim[i]; ++j) {
      const int64_t s = inputs[i].shape()[batch_ndim[i] + j];
      for (const auto& [name, at] : sizes) {
        if (name == signature_.inputs[i][j] && at.second != s) {
          return Invalid(*this, absl::StrCat("core dim '", name, "' is ", at.second, " in input ",
                                             at.first, " but ", s, " in input ", i, " (shape ",
                                             ShapeText(inputs[i].shape()), ")"));
        }
      }
      sizes.push_back({signature_.inputs[i][j], {i, s}});
    }
  }
  int64_t total = 1;
  for (int64_t s : batch_shape) {
    std::optional<int64_t> t = CheckedMul(total, s);
    if (!t)
      return Invalid(*this, absl::StrCat("batch shape ", ShapeText(batch_shape), " is too large"));
    total = *t;
  }
  absl::StatusOr<ApplyPtr> core = CoreNode(node.inputs());
  if (!core.ok()) return core.status();
  const size_t n_out = signature_.outputs.size();
  outputs.resize(n_out);
  // The outputs' core shapes, where every name is an input's (0 for the others when no item
  // runs); else item 0's results give them.
  std::vector<Shape> item_shape(n_out);
  bool known = true;
  for (size_t o = 0; o < n_out; ++o) {
    for (const std::string& name : signature_.outputs[o]) {
      auto at = std::find_if(sizes.begin(), sizes.end(),
                             [&](const auto& s) { return s.first == name; });
      known = known && at != sizes.end();
      item_shape[o].push_back(at != sizes.end() ? at->second.second : 0);
    }
  }
  if (known || total == 0) {
    RETURN_IF_ERROR(AllocateOutputs(*this, node, batch_shape, item_shape, outputs));
  }
  if (total == 0) return absl::OkStatus();
  // Per input, each batch dim's element stride (0 where it broadcasts).
  std::vector<std::vector<int64_t>> step(n_in, std::vector<int64_t>(batch, 0));
  for (size_t i = 0; i < n_in; ++i) {
    for (int d = 0; d < batch_ndim[i]; ++d) {
      if (inputs[i].shape()[d] != 1) {
        step[i][batch - batch_ndim[i] + d] = inputs[i].strides()[d];
      }
    }
  }
  const OpBatch whole{inputs, batch_shape, step, total};
  std::vector<Tensor> items(n_in);
  std::vector<Tensor> results;
  std::vector<int64_t> item_size(n_out, 0);
  for (size_t o = 0; o < n_out; ++o) item_size[o] = ShapeSize(item_shape[o]);
  // Item b by the core op's Perform on views of its inputs (no copies), copied into the outputs.
  auto run_item = [&](int64_t b, const BatchCursor& at) -> absl::Status {
    for (size_t i = 0; i < n_in; ++i) {
      const Tensor& t = inputs[i];
      Shape shape(t.shape().end() - core_ndim[i], t.shape().end());
      Shape strides(t.strides().end() - core_ndim[i], t.strides().end());
      items[i] = t.View(std::move(shape), std::move(strides), at.offset(i));
    }
    results.assign(n_out, Tensor());
    if (absl::Status st = core_->Perform(**core, items, results); !st.ok()) {
      // The core op's code kept (a budget's RESOURCE_EXHAUSTED stays one), the item named.
      return absl::Status(st.code(),
                          absl::StrCat(Name(), ": batch item ", b, ": ", st.message()));
    }
    for (size_t o = 0; o < n_out; ++o) {
      const DType dtype = node.output_ptr(static_cast<int>(o))->tensor_type()->dtype();
      if (results[o].dtype() != dtype) {
        return Invalid(*this, absl::StrCat("the core op's output ", o, " has dtype ",
                                           DTypeName(results[o].dtype()), ", not ",
                                           DTypeName(dtype)));
      }
    }
    if (b == 0 && !known) {  // the core shapes are item 0's
      for (size_t o = 0; o < n_out; ++o) {
        item_shape[o] = results[o].shape();
        item_size[o] = results[o].size();
      }
      RETURN_IF_ERROR(AllocateOutputs(*this, node, batch_shape, item_shape, outputs));
    }
    for (size_t o = 0; o < n_out; ++o) {
      const Tensor& r = results[o];
      if (r.shape() != item_shape[o]) {
        return Invalid(*this, absl::StrCat("the core op's output ", o, " has shape ",
                                           ShapeText(r.shape()), " for batch item ", b, " but ",
                                           b == 0 ? "the signature " + signature_.ToString() +
                                                        " gives " + ShapeText(item_shape[o])
                                                  : "item 0 had " + ShapeText(item_shape[o])));
      }
      const Tensor c = r.Contiguous();
      const size_t bytes = static_cast<size_t>(item_size[o]) * DTypeSize(r.dtype());
      if (bytes > 0) {
        std::memcpy(static_cast<char*>(outputs[o].raw_data()) + b * bytes, c.raw_data(), bytes);
      }
    }
    return absl::OkStatus();
  };
  // The core op's batched kernel, when it has one for these inputs: the items it leaves (errors,
  // special cases) run one by one, in order, so the first error is the per-item path's.
  if (BatchKernel kernel = FindBatchKernel(*core_); kernel != nullptr && known) {
    std::vector<int64_t> redo;
    ASSIGN_OR_RETURN(const bool batched, kernel(*core_, **core, whole, outputs, redo));
    if (batched) {
      for (int64_t b : redo) {
        RETURN_IF_ERROR(PollInterrupt());
        RETURN_IF_ERROR(run_item(b, BatchCursor(whole, b)));
      }
      return absl::OkStatus();
    }
  }
  BatchCursor cursor(whole, 0);
  for (int64_t b = 0; b < total; ++b, cursor.Next()) {
    RETURN_IF_ERROR(PollInterrupt());  // a batch of many items stops when the call is cancelled
    RETURN_IF_ERROR(run_item(b, cursor));
    if (b == 0) {
      // Outputs with no elements: the other items would compute nothing.
      bool any = false;
      for (size_t o = 0; o < n_out; ++o) any = any || item_size[o] > 0;
      if (!any && n_out > 0) break;
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
