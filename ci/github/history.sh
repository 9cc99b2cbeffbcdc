#!/usr/bin/env bash
# Durable history on a git branch: main's runs as `attnprof export` JSON lines, one file per
# recorded job, so the history outlives any cache. Only trusted pushes to main write it (the
# record job, with `contents: write`); every job may read it.
#
#   history.sh fetch DB [FINGERPRINT]  import the slice a comparison needs into DB (created if
#                                      absent): with a fingerprint, that environment's newest
#                                      $ATTNPROF_HISTORY_WINDOW files (default 200), and every
#                                      file of the layout before slices; skipping the files
#                                      DB.imported lists (what earlier fetches into DB took)
#   history.sh fetch-all DB            import every file on the branch (to read all of it)
#   history.sh push FILE PATH          add FILE to the branch as PATH
#                                      (history/<name>/<fingerprint>/<time>-....jsonl)
#
# Environment: ATTNPROF_HISTORY_BRANCH (default attnprof-history), ATTNPROF_HISTORY_REMOTE
# (default origin), ATTNPROF_BIN (the attnprof executable; default build/attnprof).
# The branch is written with git plumbing (a private index, commit-tree, push), never a
# checkout, so the job's working tree is untouched. Files have unique names, so two jobs
# pushing at once never conflict: a rejected push refetches and retries. File names begin with
# their time (UTC, to the second), so names sort oldest first.
set -euo pipefail
branch="${ATTNPROF_HISTORY_BRANCH:-attnprof-history}"
remote="${ATTNPROF_HISTORY_REMOTE:-origin}"
attnprof="${ATTNPROF_BIN:-build/attnprof}"
window="${ATTNPROF_HISTORY_WINDOW:-200}"
ref="refs/attnprof/history"  # a private local ref for what was fetched

fetch_branch() {
  # A missing branch is not an error: the first recording job creates it.
  if git fetch --quiet --no-tags "$remote" "+refs/heads/$branch:$ref" 2>/dev/null; then
    return 0
  fi
  git update-ref -d "$ref" 2>/dev/null || true
  return 1
}

# The branch's files as "BLOB PATH" lines; with a fingerprint, only the slice (see above).
select_files() {
  local fp="$1"
  git ls-tree -r "$ref" -- history/ | awk -v fp="$fp" -v window="$window" '
    $4 !~ /\.jsonl$/ { next }
    { n = split($4, part, "/") }
    fp == "" || n == 3 { print $3, $4; next }   # everything, or the layout before slices
    n == 4 && part[3] == fp { sliced[++k] = part[4] "\t" $3 " " $4 }
    END {
      if (k == 0) exit
      # Newest first by file name (its time), across suites; the window of them.
      cmd = "sort -r | head -n " window " | cut -f2-"
      for (i = 1; i <= k; ++i) print sliced[i] | cmd
      close(cmd)
    }'
}

# Writes each selected blob not in the manifest to DIR (one git process for all of them) and
# prints the files written.
extract_new() {
  local manifest="$1" dir="$2" script
  # The script as an argument: stdin is the list.
  script="$(cat <<'PY'
import os, subprocess, sys
manifest, out = sys.argv[1:3]
seen = set(open(manifest).read().split()) if os.path.exists(manifest) else set()
blobs = []
for line in sys.stdin:
    blob, path = line.rstrip("\n").split(" ", 1)
    if blob not in seen and blob not in blobs:
        blobs.append(blob)
cat = subprocess.Popen(["git", "cat-file", "--batch"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE)
cat.stdin.write("".join(b + "\n" for b in blobs).encode())
cat.stdin.close()
for n, blob in enumerate(blobs):
    size = int(cat.stdout.readline().split()[2])
    path = os.path.join(out, f"{n:07d}-{blob}.jsonl")
    with open(path, "wb") as f:
        f.write(cat.stdout.read(size))
    cat.stdout.read(1)  # the newline after each object
    print(path)
sys.exit(cat.wait())
PY
)"
  python3 -c "$script" "$manifest" "$dir"
}

# Imports FILES (from stdin, one a line) into DB in batches that fit a command line; prints the
# last summary line.
import_files() {
  local db="$1"
  xargs -r -d '\n' -n 2000 "$attnprof" import --db "$db" | tail -n 1
}

cmd_fetch() {
  local db="$1" fp="${2:-}"
  if ! fetch_branch; then
    echo "history: no branch $branch on $remote yet; starting from an empty history"
    return 0
  fi
  local dir manifest="$db.imported" total
  dir="$(mktemp -d)"
  total="$(git ls-tree -r --name-only "$ref" -- history/ | grep -c '\.jsonl$' || true)"
  select_files "$fp" | extract_new "$manifest" "$dir" >"$dir.list"
  mapfile -t files <"$dir.list"
  rm -f "$dir.list"
  if [ "$total" -eq 0 ]; then
    echo "history: $branch holds no exports yet"
  elif [ "${#files[@]}" -eq 0 ]; then
    echo "history: nothing new on $branch for this slice ($total export(s) there)"
  else
    echo "history: importing ${#files[@]} export(s) from $branch" \
         "(${fp:+environment $fp, }of $total there)"
    printf '%s\n' "${files[@]}" | import_files "$db"
    # Only once the import succeeded: the blobs it took (file names end in their blob id).
    printf '%s\n' "${files[@]}" | sed 's/.*-\([0-9a-f]*\)\.jsonl$/\1/' >>"$manifest"
  fi
  rm -rf "$dir"
}

cmd_fetch_all() {
  local db="$1"
  if ! fetch_branch; then
    echo "history: no branch $branch on $remote yet; starting from an empty history"
    return 0
  fi
  local dir
  dir="$(mktemp -d)"
  git archive --format=tar "$ref" | tar -x -C "$dir"
  mapfile -t files < <(find "$dir" -name '*.jsonl' | sort)
  if [ "${#files[@]}" -eq 0 ]; then
    echo "history: $branch holds no exports yet"
  else
    echo "history: importing ${#files[@]} export(s) from $branch"
    printf '%s\n' "${files[@]}" | import_files "$db"
  fi
  rm -rf "$dir"
}

cmd_push() {
  local file="$1" path="$2"
  case "$path" in
    /* | *..*) echo "history: bad path \"$path\" (relative, no ..)" >&2; exit 2 ;;
  esac
  local blob
  blob="$(git hash-object -w "$file")"
  for attempt in 1 2 3 4 5; do
    local parent="" index
    index="$(mktemp)"
    rm -f "$index"
    if fetch_branch; then
      parent="$(git rev-parse "$ref")"
      GIT_INDEX_FILE="$index" git read-tree "$parent"
    else
      GIT_INDEX_FILE="$index" git read-tree --empty
    fi
    GIT_INDEX_FILE="$index" git update-index --add --cacheinfo "100644,$blob,$path"
    local tree commit
    tree="$(GIT_INDEX_FILE="$index" git write-tree)"
    rm -f "$index"
    local message="attnprof history: $path"
    [ -n "${GITHUB_SHA:-}" ] && message+=" (from ${GITHUB_SHA:0:12})"
    # The job's own identity when git has none configured (a fresh runner).
    commit="$(GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-attnprof}" \
      GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-attnprof@users.noreply.github.com}" \
      GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-attnprof}" \
      GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-attnprof@users.noreply.github.com}" \
      git commit-tree "$tree" ${parent:+-p "$parent"} -m "$message")"
    if git push --quiet "$remote" "$commit:refs/heads/$branch"; then
      echo "history: added $path to $branch"
      return 0
    fi
    echo "history: push rejected (attempt $attempt; another job pushed first), retrying" >&2
    sleep $((attempt * 2))
  done
  echo "history: could not push to $branch after 5 attempts" >&2
  exit 3
}

usage="usage: history.sh fetch DB [FINGERPRINT] | fetch-all DB | push FILE PATH"
case "${1:-}" in
  fetch) [ $# -eq 2 ] || [ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }; cmd_fetch "$2" "${3:-}" ;;
  fetch-all) [ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }; cmd_fetch_all "$2" ;;
  push) [ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }; cmd_push "$2" "$3" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
