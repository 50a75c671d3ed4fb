// Real graphs the fuzzers start from: make_corpus writes them as the seed corpus, and the
// execute_request target compiles the compile seeds once to run requests against.
#ifndef KILN_TESTS_FUZZ_SEEDS_H_
#define KILN_TESTS_FUZZ_SEEDS_H_

#include <vector>

#include "kiln/v1/service.pb.h"

namespace kiln::fuzz {

// Compile requests over small graphs: the README's seed, scaling, reductions, dot, indexing,
// nnet, integer ops, and a shared variable with an update.
std::vector<v1::CompileRequest> SeedCompileRequests();

// Grad requests: a scalar cost of some inputs, differentiated with respect to them.
std::vector<v1::GradRequest> SeedGradRequests();

}  // namespace kiln::fuzz

#endif  // KILN_TESTS_FUZZ_SEEDS_H_
