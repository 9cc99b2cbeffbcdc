// Durations for people: one formatter for every table attnprof prints.
#pragma once

#include <string>

namespace attnprof::util {

// "812 ns", "12.3 us", "4.56 ms", "123 ms", "1.23 s": three significant figures, fixed units,
// negative values (differences) keep their sign.
std::string format_duration(double ns);

}  // namespace attnprof::util
