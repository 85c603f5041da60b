// The program's thread-local block (shared_section.h), found once from its PT_TLS header.
#include "shared_section.h"

#include <link.h>

namespace bertc::sim {

namespace {
struct ThreadLocalBlock {
  char *begin = nullptr;
  size_t bytes = 0;
};

/// The first object dl_iterate_phdr reports is the program itself.
int findProgramBlock(struct dl_phdr_info *info, size_t, void *result) {
  auto &block = *static_cast<ThreadLocalBlock *>(result);
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_TLS) {
      block.begin = static_cast<char *>(info->dlpi_tls_data);
      block.bytes = block.begin ? info->dlpi_phdr[i].p_memsz : 0;
    }
  return 1; // stop after the program
}

const ThreadLocalBlock &programBlock() {
  static const ThreadLocalBlock block = [] {
    ThreadLocalBlock found;
    dl_iterate_phdr(&findProgramBlock, &found);
    return found;
  }();
  return block;
}
} // namespace

char *sharedBegin() { return programBlock().begin; }
size_t sharedBytes() { return programBlock().bytes; }

} // namespace bertc::sim
