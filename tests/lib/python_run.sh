# The Python kernels' tests' first run, sourced: `first_run YAML` runs `attnprof run YAML --wide`
# in the test's folder, its output in $out (echoed, indented) and its exit code in $rc, and exits
# 77 (skipped) where attnprof-worker was built without Python, saying so. Uses $attnprof.
first_run() {
  out="$("$attnprof" run "$1" --wide 2>&1)"
  rc=$?
  if grep -q "built without Python" <<<"$out"; then
    echo "skip: this attnprof-worker was built without Python"
    exit 77
  fi
  echo "$out" | sed 's/^/    /'
}
