// `attnprof package`'s child: the packaging script (ci/aoti-package.py) in the python of the
// worker's torch, and the command's exit code from how it ended. The script notes each step in
// a status file ("importing\tFILE", "calling NAME.forward\tFILE:LINE", "exporting\tFILE",
// "done"), so a process that ends without a word, because the user's module ended it
// (os._exit) or crashed it, is named with the step and the module's file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attnprof::cli {

// Runs argv (the script with --status status_file) and returns the script's own exit code once
// it noted "done". Otherwise util::InputError (exit 2) at the module's file where the process
// exited in the middle of a step, util::EnvironmentError (exit 3) naming it where it was killed
// by a signal, or where it ended before its first step.
int run_packaging(const std::vector<std::string>& argv, const std::filesystem::path& status_file);

}  // namespace attnprof::cli
