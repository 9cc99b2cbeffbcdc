# The shell tests' checks, sourced: `ok WHAT`, `bad WHAT` (counted in $fails), and `expect WHAT
# RC PATTERN -- COMMAND...`, which runs COMMAND and checks its exit code and output. A script ends
# with its own verdict on $fails.
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }
# expect WHAT RC PATTERN -- COMMAND...: COMMAND's exit code is RC and its output matches PATTERN.
expect() {
  local what="$1" rc="$2" pattern="$3"
  shift 4
  local out got
  out="$("$@" 2>&1)"
  got=$?
  if [ "$got" != "$rc" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    bad "$what: exit $got (want $rc), output lacks /$pattern/:"
    sed 's/^/    /' <<<"$out" | tail -40
  else
    ok "$what"
  fi
}
