// attnprof bisect's search over a commit range: which commit to measure next, what one step's
// paired A/B (the step's build against the good commit's) says of it, and the answer.
//
// The range is oldest first: commits[0] is the good commit, commits.back() the bad one. The bad
// commit is measured first: a change point in history, or a hunch, is not yet a regression, and
// on a noisy machine bisecting one that is not there would name a commit by chance. Then the
// middle of what is left, until the last good and the first bad commit are neighbours. A step
// that cannot tell (inconclusive) stops the search there: guessing its side would send the rest
// of the search into the wrong half with nothing to show for it, so the commits that remain
// are the answer, and measuring again with a longer budget (over that smaller range) goes on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/gate/compare.h"

namespace attnprof::bisect {

enum class Side { good, bad, inconclusive };
const char* to_string(Side);  // "good", "bad", "inconclusive"

// One step's judgement from its A/B's verdicts, one per case that moved: a regression in any of
// them (or one an annotation accepted, which was one) is bad; every case unchanged, faster or
// ignored is good; anything else (inconclusive, failed, missing) cannot tell, and stops.
struct StepJudgement {
  Side side = Side::inconclusive;
  gate::CaseVerdict decisive;  // the case that decided: the largest regression, else the first
                               // that cannot tell, else the one closest to a regression
  std::string why;             // one line: "regression of KEY", "KEY inconclusive: ..."
};
StepJudgement judge_step(const std::vector<gate::CaseVerdict>& verdicts);

class Bisection {
 public:
  enum class State { searching, found, not_slower, stopped };

  // util::InputError when the range has fewer than two commits.
  explicit Bisection(std::vector<std::string> commits);

  // The index of the commit to measure next (the bad commit first, then the middle of what is
  // left), or nullopt when the search is over.
  std::optional<std::size_t> next() const;
  // The side the step at `index` (next()'s) was judged to be on.
  void record(std::size_t index, Side side);

  State state() const { return m_state; }
  const std::vector<std::string>& commits() const { return m_commits; }
  // The newest commit known good and the oldest known bad (the bad commit itself until its
  // step says so; then the range's answer lies in (last_good, first_bad]).
  const std::string& last_good() const { return m_commits[m_lo]; }
  const std::string& first_bad() const { return m_commits[m_hi]; }
  // The commits that may still be the first bad one, oldest first.
  std::vector<std::string> remaining() const;
  // Steps a search over the remaining commits takes, the bad commit's own included while it is
  // not yet measured: ceil(log2(remaining)) (+1).
  int steps_left() const;

 private:
  std::vector<std::string> m_commits;
  std::size_t m_lo = 0, m_hi = 0;
  bool m_bad_confirmed = false;
  State m_state = State::searching;
};

}  // namespace attnprof::bisect
