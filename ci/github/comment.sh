#!/usr/bin/env bash
# Posts the gate's report as one pull-request comment, updated in place on every push.
#
#   comment.sh DIR
#
# DIR holds what the gate jobs of one workflow run left in their comment artifacts
# (gate.sh writes <name>.md and pr). Run by a separate `workflow_run` job
# (.github/workflows/attnprof-comment.yml): the gate jobs of a fork's pull request have no
# token that may comment, and this job runs the default branch's code, never the PR's. So
# everything in DIR is untrusted text: the PR number must be digits, the markdown is only ever
# sent as a comment body.
#
# Environment: GITHUB_REPOSITORY, GH_TOKEN (for gh), ATTNPROF_RUN_URL (a link to the gate's
# run, optional), ATTNPROF_COMMENT_AUTHOR (whose comment to update; default
# github-actions[bot]), ATTNPROF_COMMENT_LIMIT (default 65000 bytes; GitHub allows 65536
# characters).
set -euo pipefail
dir="${1:?usage: comment.sh DIR}"
repo="${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}"
author="${ATTNPROF_COMMENT_AUTHOR:-github-actions[bot]}"
limit="${ATTNPROF_COMMENT_LIMIT:-65000}"
marker="<!-- attnprof-gate -->"

mapfile -t prs < <(find "$dir" -type f -name pr -exec cat {} + | tr -d ' \r' | sort -u)
if [ "${#prs[@]}" -eq 0 ]; then
  echo "comment: no pull request number in $dir (not a pull request run?); nothing to post"
  exit 0
fi
if [ "${#prs[@]}" -ne 1 ] || ! [[ "${prs[0]}" =~ ^[0-9]+$ ]]; then
  echo "comment: expected one pull request number, found: ${prs[*]}" >&2
  exit 2
fi
pr="${prs[0]}"

body="$(mktemp)"
python3 - "$dir" "$body" "$limit" "$marker" "${ATTNPROF_RUN_URL:-}" <<'PY'
import pathlib, sys
root, dst, limit, marker, url = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
parts = sorted(pathlib.Path(root).rglob("*.md"), key=lambda p: p.name)
head = marker + "\n"
tail = f"\n[The run, its job summaries and reports]({url})\n" if url else ""
budget = (limit - len(head.encode()) - len(tail.encode())) // max(1, len(parts))
texts = []
for p in parts:
    text = p.read_text(encoding="utf-8", errors="replace")
    if len(parts) > 1:
        text = f"### {p.stem}\n\n" + text.replace("## attnprof gate", "#### attnprof gate", 1)
    if len(text.encode()) > budget:
        # Keep what comes before the folded unchanged cases, whole lines only.
        text = text.split("<details>", 1)[0]
        cut = text.encode()[: max(0, budget - 200)].decode("utf-8", "ignore")
        text = cut[: cut.rfind("\n") + 1] + "\n… cut to fit one comment: the job summary has it all.\n"
    texts.append(text)
pathlib.Path(dst).write_text(head + "\n".join(texts) + tail, encoding="utf-8")
PY

# The first comment of ours that carries the marker: updated, never duplicated.
existing="$(gh api --paginate "repos/$repo/issues/$pr/comments" |
  python3 -c '
import json, sys
author, marker = sys.argv[1], sys.argv[2]
text = sys.stdin.read()
# --paginate concatenates the pages JSON arrays: read them one after another.
dec, at, found = json.JSONDecoder(), 0, ""
while at < len(text) and not found:
    while at < len(text) and text[at].isspace():
        at += 1
    if at >= len(text):
        break
    page, at = dec.raw_decode(text, at)
    for c in page:
        if c.get("user", {}).get("login") == author and c.get("body", "").startswith(marker):
            found = str(c["id"])
            break
print(found)
' "$author" "$marker")"
if [ -n "$existing" ]; then
  gh api -X PATCH "repos/$repo/issues/comments/$existing" -F "body=@$body" >/dev/null
  echo "comment: updated comment $existing on #$pr"
else
  gh api -X POST "repos/$repo/issues/$pr/comments" -F "body=@$body" >/dev/null
  echo "comment: posted a comment on #$pr"
fi
rm -f "$body"
