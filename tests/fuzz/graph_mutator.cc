#include "tests/fuzz/graph_mutator.h"

#include <limits>
#include <vector>

#include "core/graph/op_registry.h"
#include "core/ops/scalar_op.h"

namespace kiln::fuzz {
namespace {

// Scalar op names, as the wire spells them.
constexpr const char* kScalarOps[] = {
#define KILN_FUZZ_SCALAR_NAME(e, name, ...) name,
    KILN_SCALAR_OPS(KILN_FUZZ_SCALAR_NAME)
#undef KILN_FUZZ_SCALAR_NAME
};

// Integers at the edges of what sizes, axes, indices and bounds accept.
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kEdges[] = {-2,   -1,  0, 1, 2, 3, 7, int64_t{1} << 31, int64_t{1} << 46,
                              kMin, kMax};

}  // namespace

void MutateGraph(v1::Graph& g, std::mt19937_64& rng) {
  auto pick = [&](int n) { return n > 0 ? static_cast<int>(rng() % n) : 0; };
  auto edge = [&] { return kEdges[pick(std::size(kEdges))]; };
  v1::Node* node = g.nodes_size() > 0 ? g.mutable_nodes(pick(g.nodes_size())) : nullptr;
  switch (rng() % 7) {
    case 0: {  // rewire an input to an input, a constant or an earlier node's output
      if (node == nullptr || node->inputs_size() == 0) return;
      v1::ValueRef* ref = node->mutable_inputs(pick(node->inputs_size()));
      const int which = pick(3);
      if (which == 0) ref->set_input(pick(g.inputs_size() + 1));
      if (which == 1) ref->set_constant(pick(g.constants_size() + 1));
      if (which == 2) {
        ref->mutable_node_output()->set_node(pick(g.nodes_size()));
        ref->mutable_node_output()->set_output(pick(2));
      }
      return;
    }
    case 1: {  // an integer attribute (or one element of a list) to an edge value
      if (node == nullptr || node->op().attrs_size() == 0) return;
      v1::AttrValue* v =
          node->mutable_op()->mutable_attrs(pick(node->op().attrs_size()))->mutable_value();
      if (v->has_ints() && v->ints().values_size() > 0) {
        v->mutable_ints()->set_values(pick(v->ints().values_size()), edge());
      } else if (v->has_ints() || v->value_case() == v1::AttrValue::kI) {
        v->set_i(edge());
      } else if (v->value_case() == v1::AttrValue::kS) {
        v->set_s(rng() % 2 ? kScalarOps[pick(std::size(kScalarOps))] : "");
      }
      return;
    }
    case 2: {  // another registered op class
      static const std::vector<std::string> kOpClasses = RegisteredOps();
      if (node != nullptr) node->mutable_op()->set_kind(kOpClasses[pick(static_cast<int>(kOpClasses.size()))]);
      return;
    }
    case 3: {  // a constant's bytes: an edge value in place, or all bytes alike
      if (g.constants_size() == 0) return;
      std::string& data =
          *g.mutable_constants(pick(g.constants_size()))->mutable_value()->mutable_data();
      if (data.size() >= 8 && rng() % 2) {
        const int64_t v = edge();
        std::memcpy(data.data() + 8 * pick(data.size() / 8), &v, 8);
      } else {
        const char fill[] = {0, 1, 0x7f, static_cast<char>(0x80), static_cast<char>(0xff)};
        data.assign(data.size(), fill[pick(std::size(fill))]);
      }
      return;
    }
    case 4: {  // an input's dtype
      if (g.inputs_size() == 0) return;
      g.mutable_inputs(pick(g.inputs_size()))
          ->mutable_type()
          ->set_dtype(static_cast<v1::DType>(1 + pick(14)));
      return;
    }
    case 5: {  // a static dim of an input or of a node's declared output type
      v1::TensorType* type = nullptr;
      if (rng() % 2 && g.inputs_size() > 0) {
        type = g.mutable_inputs(pick(g.inputs_size()))->mutable_type();
      } else if (node != nullptr && node->output_types_size() > 0) {
        type = node->mutable_output_types(pick(node->output_types_size()));
      }
      if (type == nullptr) return;
      v1::StaticDim* dim = type->shape_size() > 0 && rng() % 4
                               ? type->mutable_shape(pick(type->shape_size()))
                               : type->add_shape();
      dim->set_known(rng() % 2);
      dim->set_size(dim->known() ? edge() : 0);
      return;
    }
    default:  // a node again, and an output reading it
      if (node == nullptr) return;
      *g.add_nodes() = *node;
      if (g.outputs_size() > 0) {
        v1::NodeOutput* out = g.mutable_outputs(pick(g.outputs_size()))->mutable_node_output();
        out->set_node(g.nodes_size() - 1);
        out->set_output(0);
      }
      return;
  }
}

}  // namespace kiln::fuzz
