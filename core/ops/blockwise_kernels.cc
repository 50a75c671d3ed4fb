// Blockwise's kernel: the core op's Perform on views of each batch item's inputs (no copies),
// its results copied into the batched outputs.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ops/blockwise.h"
#include "core/ops/op_util.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// "(2, 3)".
std::string ShapeText(std::span<const int64_t> shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
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
  if (total == 0) {
    // No item to run: the core dims come from the inputs' names (0 for a name only outputs have).
    for (size_t o = 0; o < n_out; ++o) {
      Shape shape = batch_shape;
      for (const std::string& name : signature_.outputs[o]) {
        int64_t s = 0;
        for (const auto& [n, at] : sizes) {
          if (n == name) s = at.second;
        }
        shape.push_back(s);
      }
      const DType dtype = node.output_ptr(static_cast<int>(o))->tensor_type()->dtype();
      if (absl::Status st = CheckOutputShape(*this, shape, dtype); !st.ok()) return st;
      outputs[o] = Tensor::Empty(dtype, shape);
    }
    return absl::OkStatus();
  }
  // Per input, its element offset for the current batch index and each batch dim's stride (0
  // where it broadcasts).
  std::vector<std::vector<int64_t>> step(n_in, std::vector<int64_t>(batch, 0));
  for (size_t i = 0; i < n_in; ++i) {
    for (int d = 0; d < batch_ndim[i]; ++d) {
      if (inputs[i].shape()[d] != 1) {
        step[i][batch - batch_ndim[i] + d] = inputs[i].strides()[d];
      }
    }
  }
  std::vector<int64_t> offset(n_in, 0);
  std::vector<int64_t> index(batch, 0);
  std::vector<Tensor> items(n_in);
  std::vector<Tensor> results;
  std::vector<int64_t> item_size(n_out, 0);
  std::vector<Shape> item_shape(n_out);
  for (int64_t b = 0; b < total; ++b) {
    RETURN_IF_ERROR(PollInterrupt());  // a batch of many items stops when the call is cancelled
    for (size_t i = 0; i < n_in; ++i) {
      const Tensor& t = inputs[i];
      Shape shape(t.shape().end() - core_ndim[i], t.shape().end());
      Shape strides(t.strides().end() - core_ndim[i], t.strides().end());
      items[i] = t.View(std::move(shape), std::move(strides), offset[i]);
    }
    results.assign(n_out, Tensor());
    if (absl::Status st = core_->Perform(**core, items, results); !st.ok()) {
      // The core op's code kept (a budget's RESOURCE_EXHAUSTED stays one), the item named.
      return absl::Status(st.code(),
                          absl::StrCat(Name(), ": batch item ", b, ": ", st.message()));
    }
    for (size_t o = 0; o < n_out; ++o) {
      const Tensor& r = results[o];
      const DType dtype = node.output_ptr(static_cast<int>(o))->tensor_type()->dtype();
      if (r.dtype() != dtype) {
        return Invalid(*this, absl::StrCat("the core op's output ", o, " has dtype ",
                                           DTypeName(r.dtype()), ", not ", DTypeName(dtype)));
      }
      if (b == 0) {
        item_shape[o] = r.shape();
        item_size[o] = r.size();
        Shape shape = batch_shape;
        shape.insert(shape.end(), r.shape().begin(), r.shape().end());
        if (absl::Status st = CheckOutputShape(*this, shape, dtype); !st.ok()) return st;
        outputs[o] = Tensor::Empty(dtype, std::move(shape));
      } else if (r.shape() != item_shape[o]) {
        return Invalid(*this, absl::StrCat("the core op's output ", o, " has shape ",
                                           ShapeText(r.shape()), " for batch item ", b, " but ",
                                           ShapeText(item_shape[o]), " for item 0"));
      }
      const Tensor c = r.Contiguous();
      const size_t bytes = static_cast<size_t>(item_size[o]) * DTypeSize(dtype);
      if (bytes > 0) {
        std::memcpy(static_cast<char*>(outputs[o].raw_data()) + b * bytes, c.raw_data(), bytes);
      }
    }
    if (b == 0) {
      // Outputs with no elements: the other items would compute nothing.
      bool any = false;
      for (size_t o = 0; o < n_out; ++o) any = any || item_size[o] > 0;
      if (!any && n_out > 0) break;
    }
    // The next batch index (the last dim fastest), with each input's offset.
    for (int d = batch - 1; d >= 0; --d) {
      ++index[d];
      for (size_t i = 0; i < n_in; ++i) offset[i] += step[i][d];
      if (index[d] < batch_shape[d]) break;
      for (size_t i = 0; i < n_in; ++i) offset[i] -= step[i][d] * batch_shape[d];
      index[d] = 0;
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
