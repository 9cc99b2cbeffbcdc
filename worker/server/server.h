// attnprof-worker's side of the protocol (harness/worker/protocol.h): loads plugins, answers
// describe, runs cases whole (run) or step by step for an interleaved A/B (prepare, batch,
// finish), and reports every failure it survives as a reply. Links LibTorch, CUDA, CUPTI;
// attnprof does not.
#pragma once

namespace attnprof::worker {

// The worker's main: parses its arguments (--plugin, --threads, --no-trace, ...; --help lists
// them), sends its hello, then serves requests from stdin until "quit" or end of input.
int serve(int argc, char** argv);

}  // namespace attnprof::worker
