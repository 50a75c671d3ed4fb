// Structure-aware mutation for the fuzz targets whose input is a request holding a kiln.v1.Graph:
// libFuzzer's byte mutations rarely keep a message parseable, these always do.
#ifndef KILN_TESTS_FUZZ_GRAPH_MUTATOR_H_
#define KILN_TESTS_FUZZ_GRAPH_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "kiln/v1/graph.pb.h"

namespace kiln::fuzz {

// One random structural change: a node input rewired, an integer attribute, a constant's bytes
// or a static dim set to an edge value, an op kind or a string attribute swapped, an input's
// dtype changed, a node duplicated.
void MutateGraph(v1::Graph& graph, std::mt19937_64& rng);

// libFuzzer's custom mutator for a Message with a `graph` field: half the time MutateGraph on
// the parsed message, otherwise (or when it does not parse or fit) `mutate_bytes`, which is
// LLVMFuzzerMutate.
template <typename Message>
size_t MutateRequest(uint8_t* data, size_t size, size_t max_size, unsigned seed,
                     size_t (*mutate_bytes)(uint8_t*, size_t, size_t)) {
  std::mt19937_64 rng(seed);
  Message message;
  if (rng() % 2 == 0 || !message.ParseFromArray(data, static_cast<int>(size))) {
    return mutate_bytes(data, size, max_size);
  }
  MutateGraph(*message.mutable_graph(), rng);
  const std::string out = message.SerializeAsString();
  if (out.size() > max_size) return mutate_bytes(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace kiln::fuzz

#endif  // KILN_TESTS_FUZZ_GRAPH_MUTATOR_H_
