// Where the kernels' __shared__ variables live. device_code.h makes each a static
// thread_local, so all of them lie in the program's own thread-local block (the blocks of a
// launch run one after another on one host thread, so a block sees them as its shared
// memory). The host compiler places a static of a template kernel wherever it likes, but
// never outside that block, which is why it is used to find them. Other thread-locals of
// the program lie there too; kernels touch none of them.
#pragma once

#include <cstddef>

namespace bertc::sim {

/// The calling thread's instance of the program's thread-local block.
char *sharedBegin();
size_t sharedBytes();

} // namespace bertc::sim
