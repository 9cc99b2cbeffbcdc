// attnprof-worker: the process that holds LibTorch, CUDA, CUPTI and plugins, and runs kernels
// for attnprof (harness/worker/protocol.h says how they talk).
#include "worker/server/server.h"

int main(int argc, char** argv) {
  return attnprof::worker::serve(argc, argv);
}
