// glibc allocator settings that keep freed memory, so a CPU kernel's temporaries do not fault
// their pages in again on every timed call (allocator.h).
#include "harness/util/allocator.h"

#include <malloc.h>

namespace attnprof::util {

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
}

}  // namespace attnprof::util
