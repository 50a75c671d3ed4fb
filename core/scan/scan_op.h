// Scan: Aesara's loop op. Its inner graph (the loop body) runs once per step on slices of the
// sequences, the previous values of the states and the non-sequences; it is linked once and run
// without re-linking. The builder users call is in scan.h.
//
// Outer inputs:  n_steps (an integer scalar), sequences, state initial values (each with a
//                leading dim of its taps' depth), non-sequences.
// Inner inputs:  one per sequence tap, one per state tap, one per non-sequence.
// Inner outputs: each state's new value, each nit-sot value, the until condition (as_while).
// Outer outputs: each state's values at every step (or only the last, keep_last), then each
//                nit-sot's values at every step.
#ifndef KILN_CORE_SCAN_SCAN_OP_H_
#define KILN_CORE_SCAN_SCAN_OP_H_

#include <memory>
#include <string>
#include <vector>

#include "core/graph/inner_graph.h"
#include "core/compile/inner_program.h"
#include "core/graph/op_decl.h"

namespace kiln {

struct ScanAttrs {
  std::string name = "scan_fn";
  // Each sequence's taps (offsets from the step, any sign), flattened, and their counts.
  std::vector<int64_t> seq_taps, seq_tap_counts;
  // Each state's taps (negative offsets), flattened, and their counts.
  std::vector<int64_t> state_taps, state_tap_counts;
  // Per state, 1 when its output is only its final value (Aesara's scan_save_mem).
  std::vector<int64_t> state_keep_last;
  int64_t n_nit_sot = 0;
  int64_t n_non_seqs = 0;
  // The inner graph's last output is a condition that ends the loop after the step it is true.
  bool as_while = false;
  // Steps back-propagated through by grad (-1: all).
  int64_t truncate_gradient = -1;
  // EncodeInnerGraph's text of the loop body.
  std::string inner;

  static constexpr auto Fields() {
    return std::tuple{AttrField{"name", &ScanAttrs::name},
                      AttrField{"seq_taps", &ScanAttrs::seq_taps},
                      AttrField{"seq_tap_counts", &ScanAttrs::seq_tap_counts},
                      AttrField{"state_taps", &ScanAttrs::state_taps},
                      AttrField{"state_tap_counts", &ScanAttrs::state_tap_counts},
                      AttrField{"state_keep_last", &ScanAttrs::state_keep_last},
                      AttrField{"n_nit_sot", &ScanAttrs::n_nit_sot},
                      AttrField{"n_non_seqs", &ScanAttrs::n_non_seqs},
                      AttrField{"as_while", &ScanAttrs::as_while},
                      AttrField{"truncate_gradient", &ScanAttrs::truncate_gradient},
                      AttrField{"inner", &ScanAttrs::inner}};
  }
  // The counts agree with each other, taps are in range and unique.
  absl::Status Check() const;

  int n_seqs() const { return static_cast<int>(seq_tap_counts.size()); }
  int n_states() const { return static_cast<int>(state_tap_counts.size()); }
  // How many steps back state j reaches: -(its smallest tap).
  int64_t StateDepth(int j) const;
};

class Scan final : public OpOf<Scan>, public HasInnerGraph {
 public:
  static constexpr absl::string_view kTypeName = "Scan";

  // The op of `attrs` (whose inner text is decoded and checked against the counts).
  static absl::StatusOr<std::shared_ptr<const Scan>> Make(ScanAttrs attrs);
  // The registry's factory.
  static absl::StatusOr<OpPtr> FromAttrs(const OpAttrs& wire);

  const ScanAttrs& attrs() const { return attrs_; }
  const InnerGraph& inner() const override { return inner_; }
  int OuterInputOf(int i) const override;
  Use inner_use() const override { return Use::kLoop; }
  // Aesara's str: "for{cpu,scan_fn}", "while{cpu,scan_fn}".
  std::string Name() const override;
  OpAttrs Attrs() const override { return EncodeAttrs(attrs_); }

  KILN_OP_METHODS
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;

  // Positions: outer inputs of the sequences, initial states and non-sequences; inner inputs of
  // each sequence's and state's first tap, and of the non-sequences.
  int outer_seq(int k) const { return 1 + k; }
  int outer_init(int j) const { return 1 + attrs_.n_seqs() + j; }
  int outer_non_seq(int l) const { return 1 + attrs_.n_seqs() + attrs_.n_states() + l; }
  int inner_seq(int k) const { return seq_offsets_[k]; }
  int inner_state(int j) const { return state_offsets_[j]; }
  int inner_non_seq(int l) const { return non_seq_offset_ + l; }

 private:
  explicit Scan(ScanAttrs attrs) : attrs_(std::move(attrs)) {}
  ScanAttrs attrs_;
  InnerGraph inner_;
  std::vector<int> seq_offsets_, state_offsets_;
  int non_seq_offset_ = 0;
  InnerProgram program_;  // the body, linked on the first call
  friend absl::Status RunScan(const Scan&, const Apply&, std::span<const Tensor>,
                              std::vector<Tensor>&);
};

}  // namespace kiln

#endif  // KILN_CORE_SCAN_SCAN_OP_H_
