// attnprof bisect's search (bisection.h): the step's judgement and the binary search.
#include "harness/bisect/bisection.h"

#include <cmath>

#include "harness/util/error.h"

namespace attnprof::bisect {

const char* to_string(Side s) {
  switch (s) {
    case Side::good:
      return "good";
    case Side::bad:
      return "bad";
    case Side::inconclusive:
      return "inconclusive";
  }
  return "?";
}

StepJudgement judge_step(const std::vector<gate::CaseVerdict>& verdicts) {
  StepJudgement j;
  const gate::CaseVerdict* worst_bad = nullptr;
  const gate::CaseVerdict* first_unknown = nullptr;
  const gate::CaseVerdict* closest = nullptr;  // of the good ones: the highest ratio
  for (const auto& v : verdicts) {
    using V = gate::Verdict;
    switch (v.verdict) {
      case V::regression:
      case V::accepted:
        if (!worst_bad || v.ratio > worst_bad->ratio) worst_bad = &v;
        break;
      case V::unchanged:
      case V::improvement:
      case V::ignored:
        if (!closest || v.ratio > closest->ratio) closest = &v;
        break;
      default:
        if (!first_unknown) first_unknown = &v;
    }
  }
  if (worst_bad) {
    j.side = Side::bad;
    j.decisive = *worst_bad;
    j.why = "regression of " + worst_bad->key;
  } else if (first_unknown) {
    j.decisive = *first_unknown;
    j.why = first_unknown->key + " " + gate::to_string(first_unknown->verdict) +
            (first_unknown->reason.empty() ? "" : ": " + first_unknown->reason);
  } else if (closest) {
    j.side = Side::good;
    j.decisive = *closest;
    j.why = verdicts.size() == 1 ? closest->key + " " + gate::to_string(closest->verdict)
                                 : "every case unchanged or faster";
  } else {
    j.why = "no case was measured";
  }
  return j;
}

Bisection::Bisection(std::vector<std::string> commits) : m_commits(std::move(commits)) {
  if (m_commits.size() < 2)
    throw util::InputError(
        util::Diagnostic{"--bad", 0, 0, "the range needs a good commit and a later bad one"});
  m_hi = m_commits.size() - 1;
}

std::optional<std::size_t> Bisection::next() const {
  if (m_state != State::searching) return std::nullopt;
  if (!m_bad_confirmed) return m_hi;
  return m_lo + (m_hi - m_lo) / 2;
}

void Bisection::record(std::size_t index, Side side) {
  if (m_state != State::searching || next() != index)
    throw std::logic_error("bisect: a step recorded out of turn");
  if (side == Side::inconclusive) {
    m_state = State::stopped;
    return;
  }
  if (!m_bad_confirmed) {
    m_bad_confirmed = true;
    if (side == Side::good) {
      m_state = State::not_slower;
      return;
    }
  } else if (side == Side::bad) {
    m_hi = index;
  } else {
    m_lo = index;
  }
  if (m_hi - m_lo == 1) m_state = State::found;
}

std::vector<std::string> Bisection::remaining() const {
  return {m_commits.begin() + static_cast<std::ptrdiff_t>(m_lo) + 1,
          m_commits.begin() + static_cast<std::ptrdiff_t>(m_hi) + 1};
}

int Bisection::steps_left() const {
  const auto n = static_cast<double>(m_hi - m_lo);
  return static_cast<int>(std::ceil(std::log2(n))) + (m_bad_confirmed ? 0 : 1);
}

}  // namespace attnprof::bisect
