// Include this instead of <doctest/doctest.h> in tests that use LibTorch. c10/util/Logging.h
// defines glog-style CHECK macros that would silently replace doctest's (aborting the binary
// instead of failing a test); LibTorch goes first, its macros are removed, then doctest's win.
#pragma once

#include <ATen/ATen.h>
#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LE
#undef CHECK_LT
#undef CHECK_GE
#undef CHECK_GT
#include <doctest/doctest.h>
