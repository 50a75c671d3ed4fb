// Where the tests find the source tree and the kiln-server binary. They live in one small file
// (paths.cc) so that no other test file embeds a checkout's absolute path: a clone elsewhere then
// shares every other test object through the compiler cache.
#ifndef KILN_TESTS_TESTING_PATHS_H_
#define KILN_TESTS_TESTING_PATHS_H_

namespace kiln::testing {

// The absolute path of the source tree the tests were built from.
const char* SourceDir();

// The absolute path of the kiln-server binary built beside the tests.
const char* ServerBin();

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_PATHS_H_
