# A pull-request job of GitHub's, sourced by the tests that gate a repository through
# ci/github/gate.sh as the action runs it: GitHub's variables and event file simulated, the job's
# files under $tmp/NAME. Uses $tmp, $base (the PR's base commit) and $src (attnprof's tree); run
# from the repository's checkout.
#   pr_job NAME HEAD_COMMIT NUMBER [ATTNPROF_INPUT=VALUE...]   (the gate's inputs, docs/ci.md)
pr_job() {
  local name="$1" head="$2" number="$3"
  shift 3
  git checkout --quiet --detach "$head"
  mkdir -p "$tmp/$name"
  cat >"$tmp/$name/event.json" <<JSON
{"pull_request": {"number": $number, "base": {"sha": "$base"}, "head": {"sha": "$head"}}}
JSON
  local rc=0 t0
  t0="$(date +%s.%N)"
  env GITHUB_ACTIONS=true GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH="$tmp/$name/event.json" \
      GITHUB_REF="refs/pull/$number/merge" GITHUB_SHA="$head" GITHUB_REPOSITORY=acme/attention \
      GITHUB_RUN_ID="$number" GITHUB_RUN_ATTEMPT=1 GITHUB_SERVER_URL=https://github.example \
      GITHUB_WORKSPACE="$tmp/repo" RUNNER_TEMP="$tmp/$name/runner" \
      GITHUB_STEP_SUMMARY="$tmp/$name/summary.md" GITHUB_OUTPUT="$tmp/$name/output" \
      "$@" bash "$src/ci/github/gate.sh" >"$tmp/$name/log" 2>&1 || rc=$?
  echo "$name: exit $rc in $(python3 -c "import time; print(round(time.time() - $t0))") s"
  return "$rc"
}
