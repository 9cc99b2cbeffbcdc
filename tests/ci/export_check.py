#!/usr/bin/env python3
"""Checks an `attnprof export --format bmf|gab|pytorch` file the way its consumer reads it, for
the consumers that cannot be installed here (Bencher's server and CLI are Rust, from crates.io;
github-action-benchmark is a Node action; PyTorch's uploader needs AWS): each rule below is one
the consumer's published schema or code states, named beside it. tests/ci/exports.sh runs it on
real exports and on broken ones, which it must refuse.

    export_check.py FORMAT FILE    exit 0: accepted; 1: refused, each reason on a line

Bencher Metric Format (bencher.dev/docs/reference/bencher-metric-format, and its JSON adapter,
lib/bencher_adapter/src/adapters/json.rs, which deserializes the whole file or refuses it): an
object of benchmark names, each an object of measures, each {"value": number, "lower_value"?:
number, "upper_value"?: number}.

github-action-benchmark's customSmallerIsBetter (src/extract.ts, extractCustomBenchmarkResult and
the BenchmarkResult interface): a JSON array of {name: string, value: number, unit: string,
range?: string, extra?: string}; an empty result is an error ("No benchmark result was found").

PyTorch's OSS benchmark database (pytorch/test-infra: .github/scripts/upload_benchmark_results.py
reads a JSON list of records and skips any without "metric"; clickhouse_db_schema/
oss_ci_benchmark_v3/schema.sql types the columns): benchmark Tuple(name, mode, dtype String,
extra_info Map(String, String)), model Tuple(name, type, backend String, origins Array(String),
extra_info Map), metric Tuple(name String, benchmark_values Array(Float32), target_value Float32,
extra_info Map), runners Array(Tuple(name, type, cpu_info String, cpu_count UInt32, mem_info
String, avail_mem_in_gb UInt32, gpu_info String, gpu_count UInt32, gpu_mem_info String,
avail_gpu_mem_in_gb UInt32, extra_info Map)); a record's keys are the table's columns.
"""
import json
import math
import sys


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_bmf(doc):
    errs = []
    if not isinstance(doc, dict) or not doc:
        return ["top level: want a non-empty object of benchmark names"]
    for name, measures in doc.items():
        if not name:
            errs.append("a benchmark name is empty")
        if not isinstance(measures, dict) or not measures:
            errs.append(f"{name}: want a non-empty object of measures")
            continue
        for measure, m in measures.items():
            at = f"{name}.{measure}"
            if not isinstance(m, dict):
                errs.append(f"{at}: want an object")
                continue
            if not is_number(m.get("value")):
                errs.append(f"{at}.value: want a number, got {m.get('value')!r}")
            for k, v in m.items():
                if k not in ("value", "lower_value", "upper_value"):
                    errs.append(f"{at}.{k}: not a field of a metric")
                elif not is_number(v):
                    errs.append(f"{at}.{k}: want a number, got {v!r}")
            if all(is_number(m.get(k)) for k in ("lower_value", "value", "upper_value")):
                if not m["lower_value"] <= m["value"] <= m["upper_value"]:
                    errs.append(f"{at}: want lower_value <= value <= upper_value")
    return errs


def check_gab(doc):
    if not isinstance(doc, list):
        return ["top level: want an array of BenchmarkResult entries"]
    if not doc:
        return ["top level: no benchmark result"]
    errs = []
    for i, b in enumerate(doc):
        if not isinstance(b, dict):
            errs.append(f"[{i}]: want an object")
            continue
        for k, kind in (("name", str), ("unit", str)):
            if not isinstance(b.get(k), kind) or not b.get(k):
                errs.append(f"[{i}].{k}: want a non-empty string, got {b.get(k)!r}")
        if not is_number(b.get("value")):
            errs.append(f"[{i}].value: want a number, got {b.get('value')!r}")
        for k in ("range", "extra"):
            if k in b and not isinstance(b[k], str):
                errs.append(f"[{i}].{k}: want a string, got {b[k]!r}")
        for k in b:
            if k not in ("name", "value", "unit", "range", "extra"):
                errs.append(f"[{i}].{k}: not a field of BenchmarkResult")
    return errs


STRING, UINT, FLOAT = "String", "UInt", "Float32"
STRING_MAP = "Map(String, String)"
PYTORCH = {
    "benchmark": {"name": STRING, "mode": STRING, "dtype": STRING, "extra_info": STRING_MAP},
    "model": {"name": STRING, "type": STRING, "backend": STRING, "origins": [STRING],
              "extra_info": STRING_MAP},
    "metric": {"name": STRING, "benchmark_values": [FLOAT], "target_value": FLOAT,
               "extra_info": STRING_MAP},
    "runners": [{"name": STRING, "type": STRING, "cpu_info": STRING, "cpu_count": UINT,
                 "mem_info": STRING, "avail_mem_in_gb": UINT, "gpu_info": STRING,
                 "gpu_count": UINT, "gpu_mem_info": STRING, "avail_gpu_mem_in_gb": UINT,
                 "extra_info": STRING_MAP}],
}
# The table's other columns: the uploader's metadata, which a record may also carry.
PYTORCH_METADATA = {"timestamp", "schema_version", "name", "repo", "head_branch", "head_sha",
                    "workflow_id", "run_attempt", "job_id", "servicelab_experiment_id",
                    "servicelab_trial_id", "inputs", "dependencies"}


def check_typed(v, t, at, errs):
    if t == STRING:
        ok = isinstance(v, str)
    elif t == UINT:
        ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
    elif t == FLOAT:
        ok = is_number(v)
    elif t == STRING_MAP:
        ok = isinstance(v, dict)
        if ok:
            for k, x in v.items():
                if not isinstance(x, str):
                    errs.append(f"{at}.{k}: a Map(String, String) value must be a string, "
                                f"got {x!r}")
    elif isinstance(t, list):
        ok = isinstance(v, list)
        if ok:
            for i, x in enumerate(v):
                check_typed(x, t[0], f"{at}[{i}]", errs)
    else:  # a tuple: named fields, each optional (the column's default), none unknown
        ok = isinstance(v, dict)
        if ok:
            for k, x in v.items():
                if k not in t:
                    errs.append(f"{at}.{k}: not a field of the column")
                else:
                    check_typed(x, t[k], f"{at}.{k}", errs)
    if not ok:
        errs.append(f"{at}: want {t if isinstance(t, str) else type(t).__name__}, got {v!r}")


def check_pytorch(doc):
    if not isinstance(doc, list) or not doc:
        return ["top level: want a non-empty list of records"]
    errs = []
    for i, r in enumerate(doc):
        at = f"[{i}]"
        if not isinstance(r, dict) or "metric" not in r:
            errs.append(f"{at}: not a benchmark record (no \"metric\"): the uploader skips it")
            continue
        for k, v in r.items():
            if k in PYTORCH:
                check_typed(v, PYTORCH[k], f"{at}.{k}", errs)
            elif k not in PYTORCH_METADATA:
                errs.append(f"{at}.{k}: not a column of oss_ci_benchmark_v3")
        for part, field in (("benchmark", "name"), ("model", "name"), ("metric", "name")):
            if not (r.get(part) or {}).get(field):
                errs.append(f"{at}.{part}.{field}: missing or empty")
        if not (r.get("metric") or {}).get("benchmark_values"):
            errs.append(f"{at}.metric.benchmark_values: missing or empty")
    return errs


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("bmf", "gab", "pytorch"):
        sys.exit("usage: export_check.py bmf|gab|pytorch FILE")
    fmt, path = sys.argv[1:]
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{path}: {e}")
        sys.exit(1)
    errs = {"bmf": check_bmf, "gab": check_gab, "pytorch": check_pytorch}[fmt](doc)
    for e in errs:
        print(f"{path}: {e}")
    if errs:
        sys.exit(1)
    print(f"{path}: accepted as {fmt}")


if __name__ == "__main__":
    main()
