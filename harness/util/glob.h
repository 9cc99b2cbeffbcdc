// Globs over case keys, the way every command matches them: fnmatch without flags, so `*`
// crosses `/` ("llama-2-7b/*" matches every case of the model).
#pragma once

#include <fnmatch.h>

#include <string>

namespace attnprof::util {

inline bool glob_match(const std::string& glob, const std::string& text) {
  return fnmatch(glob.c_str(), text.c_str(), 0) == 0;
}

}  // namespace attnprof::util
