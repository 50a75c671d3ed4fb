// The build's absolute paths, compiled into this file alone (see paths.h).
#include "tests/testing/paths.h"

namespace kiln::testing {

const char* SourceDir() { return KILN_SOURCE_DIR; }

const char* ServerBin() { return KILN_SERVER_BIN; }

}  // namespace kiln::testing
