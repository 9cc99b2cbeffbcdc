#!/usr/bin/env bash
# FlexAttention and transformers' attention functions end to end, as a user meets them:
# flex.yaml runs flex beside eager, sdpa.math and cpu.flash on every mask (document and prefix-LM
# included) and each score modifier, each checked against an independent implementation, the
# kernels that cannot express a modifier skipped naming it, and flex's block mask timed and its
# executed FLOPs stored beside the useful ones. hf.yaml runs transformers' eager and sdpa on a GQA
# causal case and a BERT-like one and on the masks transformers builds itself; a name the
# installed transformers lacks, a modifier a function cannot take and no transformers at all
# (planted) are skips that say which. layers.yaml: transformers' Llama decoder layer matches the
# harness's layer convention, BertLayer does not (and is checked against itself).
# flex_compile.yaml: flex@compile and hf:flex_attention, one tiny graph each. Bad values stop at
# the spot.
# Exits 77 (skipped) where the worker was built without Python.
# Usage: flex_kernels.sh BUILD_DIR
set -uo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d /tmp/attnprof-flex-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$here"/flex.yaml "$here"/hf.yaml "$here"/flex_compile.yaml "$here"/layers.* "$work/"
cd "$work"
export ATTNPROF_DB="$work/h.db"
source "$here/../lib/checks.sh"
attnprof="$build/attnprof"

source "$here/../lib/python_run.sh"
first_run flex.yaml
[ "$rc" = 0 ] && ok "flex.yaml: exit 0" || bad "flex.yaml: exit $rc"
status() { grep -E "^tinygqa/[a-z]+/$1 " <<<"$out" | awk '{print $2}'; }
for shape in b1-s32-fp32-none b1-s32-fp32-causal b1-s32-fp32-window8 b1-s32-fp32-prefix8 \
             b1-s32-fp32-document.ed089c47 b2-s32-varlen.bbaa62fe-fp32-padding \
             b1-q2-kv32-fp32-causal-alibi b1-s32-fp32-causal-alibi b1-s32-fp32-causal-softcap20 \
             b1-s32-fp32-causal-rel_bias b1-s32-fp32-causal-head_bias; do
  for k in eager flex; do
    [ "$(status "$shape/$k")" = ok ] && ok "$shape/$k agrees with its reference" ||
      bad "$shape/$k: $(status "$shape/$k")"
  done
done
for shape in b1-s32-fp32-prefix8 b1-s32-fp32-document.ed089c47; do
  [ "$(status "$shape/cpu.flash")" = ok ] && ok "$shape: cpu.flash takes it as an additive mask" ||
    bad "$shape/cpu.flash: $(status "$shape/cpu.flash")"
done
grep -qE "causal-softcap20/sdpa\.math +skipped +sdpa\.math computes no score modifier softcap \(kernels that do: eager, flex, hf:\.\.\.\)" <<<"$out" &&
  ok "sdpa.math skips softcap, naming who computes it" || bad "sdpa.math's softcap skip"
grep -qE "causal-alibi/cpu\.flash +skipped +cpu\.flash computes no score modifier alibi \(kernels that do: sdpa\.\*, eager, flex" <<<"$out" &&
  ok "cpu.flash skips alibi, naming who computes it" || bad "cpu.flash's alibi skip"
expect "softcap is checked against eager (sdpa.math cannot compute it)" 0 \
  "accuracy +max abs error .* against eager" \
  -- "$attnprof" show latest --case '*causal-softcap20/flex'
grep -qE "causal/flex +ok .*block mask built in [0-9.]+ (us|ms), executes 1\.94x the useful FLOPs" <<<"$out" &&
  ok "flex eagerly executes every pair: 1024 of 528 useful (causal, 32 tokens)" ||
  bad "flex's block mask note"
metrics="$("$attnprof" history --metric 'block_mask.build_ms' --format csv 2>&1)"
[ "$(grep -c '/flex,block_mask.build_ms,' <<<"$metrics")" = 10 ] &&
  ok "every masked flex case stores its block mask's build time" ||
  bad "block_mask.build_ms stored for $(grep -c '/flex,' <<<"$metrics") of 10 flex cases"
grep -q 'fp32-none/flex,' <<<"$metrics" && bad "an unmasked case has a block mask" ||
  ok "an unmasked case has no block mask"

# transformers' attention functions, called as its models call them.
out="$("$attnprof" run hf.yaml --wide 2>&1)"
rc=$?
echo "$out" | sed 's/^/    /'
[ "$rc" = 0 ] && ok "hf.yaml: exit 0" || bad "hf.yaml: exit $rc"
for c in "b1-s32-fp32-causal/hf:eager" "b1-s32-fp32-causal/hf:sdpa" "b1-s32-fp32-none/hf:eager" \
         "b1-s32-fp32-none/hf:sdpa" "b2-s32-varlen.bbaa62fe-fp32-padding/hf:eager" \
         "b2-s32-varlen.bbaa62fe-fp32-padding/hf:sdpa" "b1-s32-fp32-window8/hf:sdpa" \
         "b1-s32-fp32-prefix8/hf:sdpa" "b1-s32-fp32-document.ed089c47/hf:sdpa" \
         "b1-s32-fp32-causal-alibi/hf:sdpa" "b1-q3-kv32-fp32-causal/hf:eager" \
         "b1-q3-kv32-fp32-causal/hf:sdpa"; do
  grep -qE "/${c//./\\.} +ok .*backend: transformers [0-9.]+ [a-z_]+ attention" <<<"$out" &&
    ok "$c agrees with sdpa.math" || bad "$c is not ok"
done
grep -qE "/hf:nope +skipped +hf:nope: transformers [0-9.]+ has no attention function \"nope\" \(it has: eager, .*sdpa\)" <<<"$out" &&
  ok "a name transformers lacks is a skip naming its version and names" || bad "hf:nope's skip"
grep -qE "causal-alibi/hf:eager +skipped +hf:eager: transformers' eager attention takes no position bias \(alibi\)" <<<"$out" &&
  ok "hf:eager skips a bias it would ignore" || bad "hf:eager's alibi skip"
grep -qE "causal-softcap20/hf:sdpa +skipped +hf:sdpa: transformers' sdpa attention takes no softcap" <<<"$out" &&
  ok "hf:sdpa skips softcap" || bad "hf:sdpa's softcap skip"

# The layer convention against transformers' own layers (layers.py): Llama's decoder layer is
# the harness's layer; BertLayer (post-norm, biases) is not, and is checked against itself.
out="$("$attnprof" run layers.yaml --wide 2>&1)"
echo "$out" | sed 's/^/    /'
grep -qE "fp32-causal-layer/py:layers\.py:Llama +ok " <<<"$out" &&
  ok "transformers' LlamaDecoderLayer is the harness's layer" || bad "the Llama layer's row"
grep -qE "fp32-causal-layer/py:layers\.py:Llama +ok .*attention share: the module's own attention ops \(SDPA, FlexAttention\); attention [0-9.]+% of the layer" <<<"$out" &&
  ok "its attention share is its own SDPA op's" || bad "the Llama layer's attention share"
grep -qE "fp32-none-layer/py:layers\.py:Bert +failed +layer output differs from the harness's layer" <<<"$out" &&
  ok "BertLayer (post-norm) is not, and the check says so" || bad "the BertLayer row"
grep -qE "bf16-none-layer/py:layers\.py:Bert +ok " <<<"$out" &&
  ok "BertLayer checked against itself in fp32, as the docs say to" || bad "the BertLayer self-check"

# No transformers in the worker's Python (planted ahead of the real one on PYTHONPATH).
mkdir -p planted/transformers
echo 'raise ImportError("planted: no transformers here")' >planted/transformers/__init__.py
expect "no transformers: a skip saying which Python and how to install it" 0 \
  "hf:sdpa: hf: kernels need transformers, which the Python attnprof-worker embeds \(.+\) cannot import \(planted: no transformers here\): .+ -m pip install transformers" \
  -- env PYTHONPATH="$work/planted" "$attnprof" run hf.yaml --case '*none/hf:sdpa' --db planted.db --wide

# Bad values stop before anything runs, at the spot.
printf 'model: gpt2\nworkloads: [{seq_len: 16, score_mod: alibii, kernels: [flex]}]\n' >bad.yaml
expect "an unknown score modifier is exit 2 at the spot, with the list" 2 \
  'bad\.yaml:2:38: score_mod: unknown score modifier "alibii" \(modifiers: none, alibi, softcap:CAP, rel_bias, head_bias\)' \
  -- "$attnprof" validate bad.yaml
printf 'model: gpt2\nworkloads: [{seq_len: 16, kernels: ["hf:bad name"]}]\n' >bad-hf.yaml
expect "a malformed hf: name is exit 2 at the spot" 2 \
  'bad-hf\.yaml:2:37: kernel "hf:bad name": "bad name" is no attention function.s name' \
  -- "$attnprof" validate bad-hf.yaml

# The compiles: one tiny graph each, from a fresh cache.
out="$("$attnprof" run flex_compile.yaml --wide 2>&1)"
rc=$?
echo "$out" | sed 's/^/    /'
[ "$rc" = 0 ] && ok "flex_compile.yaml: exit 0" || bad "flex_compile.yaml: exit $rc"
grep -qE "causal-alibi/flex@compile +ok .*under torch\.compile mode default; compiled in [0-9.]+ (s|ms) \(fresh cache\): 1 graph, 0 graph breaks" <<<"$out" &&
  ok "flex@compile: checked, compiled from a fresh cache into one graph" || bad "flex@compile's row"
grep -qE "tinygqa/.*causal/hf:flex_attention +ok .*transformers [0-9.]+ flex_attention attention; compiled in [0-9.]+ (s|ms) \(fresh cache\)" <<<"$out" &&
  ok "hf:flex_attention (GQA causal): transformers' own compile is timed as the case's" ||
  bad "hf:flex_attention's GQA row"
grep -qE "tinybert/.*none/hf:flex_attention +ok .*compiled in [0-9.]+ (s|ms) \(fresh cache\)" <<<"$out" &&
  ok "hf:flex_attention (BERT-like, bidirectional): checked and compiled" ||
  bad "hf:flex_attention's BERT row"

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
[ "$fails" = 0 ]
