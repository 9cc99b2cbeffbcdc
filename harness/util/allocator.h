// How attnprof-worker sets up glibc's allocator before it times anything (and what the
// benchmarks that compare against it must do too, to measure what users get).
#pragma once

#include <cstddef>

namespace attnprof::util {

// glibc returns freed memory at the top of the heap (and every block above its mmap threshold)
// to the system, so a CPU kernel whose temporaries are megabytes faults its pages in again on
// every call: tens of thousands of page faults a second, whose cost depends on what else the
// machine is doing (measured here: a 2 ms sdpa.math case at 20-90 ms on a busy machine,
// differently in two processes). Keeping freed memory makes a sample the kernel's work, as it
// is in a server that runs the kernel over and over. Blocks over 32 MiB still use mmap.
void keep_freed_memory();

// Moves every later heap allocation `bytes` further on (rounded up to 16), by an allocation kept
// for the process's life. Address-space randomization moves the heap's start by whole pages,
// never within one, so without it every worker would place its tensors at the same offsets
// within a page (which cache sets they use, which arrays alias 4 KiB apart): a bias of the
// build, the same in every worker, that pairs of fresh workers could not average away.
// attnprof ab draws `bytes` per worker (ab/session.cpp).
void offset_heap(std::size_t bytes);

}  // namespace attnprof::util
