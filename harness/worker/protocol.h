// The line protocol between attnprof and attnprof-worker.
//
// Why a separate process: the worker holds LibTorch, CUDA, CUPTI and users' plugins. A kernel
// that crashes the process or leaves a sticky CUDA error takes only its worker down; attnprof
// stores what finished, starts a fresh worker and goes on. Commands that only read history
// never load LibTorch. And `attnprof ab` drives two workers built from two checkouts.
//
// Transport: the worker reads requests on stdin and writes replies on stdout, one JSON object
// per line (UTF-8, no embedded newlines: JSON escapes them). Anything else the worker or its
// libraries print goes to stderr, which attnprof collects; the worker moves stdout out of the
// way first (see server.cpp), so a kernel's printf cannot corrupt the protocol.
//
//   worker -> attnprof, once at start:  {"hello":"attnprof-worker","protocol":N,"build":"0.1.0"}
//   attnprof -> worker:                 {"id":K,"op":"...", ...arguments}
//   worker -> attnprof:                 {"id":K,"ok":true, ...answer}
//                                       {"id":K,"ok":false,"error":"...","kind":"input"|"environment"|"internal"}
//
// Operations (version 1):
//   describe                      -> env (env::Description), kernels (names, plugin ops too),
//                                    plugins ([{path, ops}]), torch_dir (LibTorch's CMake folder)
//   run      {case, trace}        -> result (core::CaseResult): the whole case, as attnprof run
//   prepare  {case}               -> ready, result: check and warm up; when not ready the result
//                                    is final (skipped, failed or error)
//   batch    {ns, min, max}       -> samples [[ns, at_ns, clock|null], ...], ready, result (when
//                                    the batch ended the case)
//   finish   {trace}              -> result: summary of every batch, metrics, traced pass
//   quit                          -> (the worker exits 0; end of input does the same)
// The version changes whenever a message changes meaning; attnprof refuses a worker of another
// version with both numbers named, since a half-understood answer would be a wrong number.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::worker {

inline constexpr int protocol_version = 1;
inline constexpr const char* build_version = "0.1.0";

// Encodes one message as a line (without the newline).
std::string encode(const nlohmann::json& message);

// Decodes one line; std::nullopt and a reason when it is not a JSON object.
std::optional<nlohmann::json> decode(const std::string& line, std::string* why);

nlohmann::json hello();

// Checks a worker's first line. Empty when it is a hello of this protocol version; otherwise the
// one-line reason, naming both versions where the worker said one.
std::string check_hello(const std::string& line, const std::string& worker_path);

// Samples travel as [ns, at_ns, clock or null]: compact, since a batch can hold hundreds.
nlohmann::json samples_to_json(const std::vector<core::Sample>& samples);
std::vector<core::Sample> samples_from_json(const nlohmann::json& j);

}  // namespace attnprof::worker
