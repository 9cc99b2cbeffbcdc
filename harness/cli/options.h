// The one rule for options that collect values (a std::vector), on attnprof's command line and
// on attnprof-worker's: each occurrence takes exactly one value, and the option is repeated for
// more (`--case 'a*' --case 'b*'`, `--case='a*'`). CLI11's default lets such an option take every
// token up to the next option, so `attnprof run --case 'x*' my.yaml` read my.yaml as a second
// glob and ran the built-in suite, and `ab --base-arg=--plugin=a.so my.yaml` gave my.yaml to the
// worker as a plugin. Applied to a whole app once its options are declared, so an option added
// later follows the rule without a word. Header-only: the worker, which links no attnprof CLI
// code, applies it too.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace attnprof::cli {

// A named option that collects values. After one_value_per_occurrence, a repeatable one.
inline bool collects_values(const CLI::Option& o) {
  return o.nonpositional() && (o.get_expected_max() >= CLI::detail::expected_max_vector_size ||
                               o.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll);
}

// Every option of `app` and its subcommands that collects values takes one per occurrence and
// keeps them all; --help shows it as "TEXT (repeatable)" instead of CLI11's "TEXT ...", which
// reads as "takes several". Positionals (the scenario files) still take every token left.
inline void one_value_per_occurrence(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (!collects_values(*o)) continue;
    std::string text = o->get_type_name();
    if (!o->get_default_str().empty()) text += "=" + o->get_default_str();
    text += " (repeatable)";
    if (o->get_required()) text += " REQUIRED";
    // expected(1) alone leaves the "take extra tokens" switch a vector option starts with.
    o->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->option_text(text);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    one_value_per_occurrence(*sub);
}

}  // namespace attnprof::cli
