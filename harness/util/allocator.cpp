// glibc allocator settings that keep freed memory, so a CPU kernel's temporaries do not fault
// their pages in again on every timed call (allocator.h).
#include "harness/util/allocator.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace attnprof::util {

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
}

void offset_heap(std::size_t bytes) {
  if (bytes == 0) return;
  static void* kept = nullptr;  // never freed: the offset lasts the process's life
  kept = std::malloc((bytes + 15) / 16 * 16);
  if (kept) std::memset(kept, 0, (bytes + 15) / 16 * 16);
}

}  // namespace attnprof::util
