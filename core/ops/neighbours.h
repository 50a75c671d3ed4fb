// Aesara's aesara.tensor.nnet.neighbours: Images2Neibs, the sliding-window view of a batch of
// images as a matrix with one flattened neighbourhood per row, and neibs2images, its inverse.
#ifndef KILN_CORE_OPS_NEIGHBOURS_H_
#define KILN_CORE_OPS_NEIGHBOURS_H_

#include <optional>
#include <string>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// mode: 'valid', 'ignore_borders', 'wrap_centered', 'half' or 'full' (Aesara's BORDER_MODE).
struct Images2NeibsAttrs {
  std::string mode = "valid";
  static constexpr auto Fields() { return std::tuple{AttrField{"mode", &Images2NeibsAttrs::mode}}; }
  absl::Status Check() const;  // one of the five modes
};

// Images2Neibs{mode}(ten4, neib_shape, neib_step): for each image ten4[n, s] (row-major over n,
// s, then the grid of windows row by row), each window of neib_shape (r, c) taken every
// neib_step rows and columns, flattened into one row of an (N, r * c) matrix of ten4's dtype.
// 'half' and 'full' pad with zeros (by r // 2 or r - 1 rows on each side, likewise columns),
// 'wrap_centered' centres odd windows on each step and wraps around the borders, 'valid'
// requires the windows to tile the image exactly and 'ignore_borders' drops what is left over.
// Given two inputs, neib_step is neib_shape (disjoint windows).
class Images2Neibs final : public DeclaredOp<Images2Neibs, Images2NeibsAttrs> {
 public:
  KILN_DECLARED_OP("Images2Neibs")
  // Aesara's "Images2Neibs{valid}".
  std::string Name() const override;
  const std::string& mode() const { return attrs().mode; }
};

// aesara.tensor.nnet.neighbours.images2neibs: Images2Neibs{mode}(ten4, neib_shape, neib_step),
// neib_step being neib_shape itself when omitted.
Var images2neibs(const Var& ten4, const Var& neib_shape,
                 const std::optional<Var>& neib_step = std::nullopt,
                 const std::string& mode = "valid");
// aesara.tensor.nnet.neighbours.neibs2images: the images of `original_shape` rebuilt from the
// disjoint windows of images2neibs (modes 'valid' and 'ignore_borders', whose dropped borders
// become zeros), as Aesara builds it: images2neibs of the windows, then reshape.
Var neibs2images(const Var& neibs, const Var& neib_shape, const Var& original_shape,
                 const std::string& mode = "valid");

}  // namespace kiln

#endif  // KILN_CORE_OPS_NEIGHBOURS_H_
