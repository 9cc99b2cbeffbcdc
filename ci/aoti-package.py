"""Makes the AOTInductor packages a scenario names (kernels "aoti:PATH.pt2").

Run it through ci/aoti-package.sh, which finds the venv with the pinned torch, or through
`attnprof package`, which runs it with the torch attnprof-worker links: a package runs only in a
LibTorch of the version that made it.

    ci/aoti-package.sh scenarios/aoti-cpu.yaml            # make what is missing or stale
    ci/aoti-package.sh scenarios/aoti-cpu.yaml --force    # make every package anew
    attnprof package my_attn.py:RopeAttention --scenario s.yaml -o my_attn.pt2 [--arg base=10000]

With --module FILE:NAME (what `attnprof package` passes), the package holds the user's module
instead of ours: NAME is an nn.Module class in FILE, or a function returning a module, called
with the --arg NAME=VALUE pairs (VALUE read as JSON, else as text). It is made for the cases
that name -o's path as their kernel (at their dtype) or as their reference (in fp32: the
module's fp32 twin, the same algorithm in higher precision). forward is called as a case calls
a package (docs/scenarios.md, "Compiled packages"); a signature that cannot take the case's
inputs is refused before anything is exported, naming forward's file and line.

The cases come from `attnprof list --json` (the scenario language lives in attnprof alone). For
each package, the cases that name it must agree on one module: level (kernel, block, layer),
device, dtype, model geometry, mask, scale and phase. The script exports that module with
torch.export (batch and sequence dims dynamic where Inductor accepts them) and packages it with
torch._inductor.aoti_compile_and_package, with metadata under the key "attnprof" (a JSON
object: format, torch version, device, dtype, level, geometry, mask, whether it takes a mask
input, the inputs and their dims, the content key; for a user's module its FILE:NAME and
arguments) that attnprof-worker checks before it loads any code.

Packages are build artifacts, cached by content: the key hashes this script's source, the torch
version and the module's spec. A package at its path whose key matches is left alone; else one
from the cache ($ATTNPROF_HOME/aoti/<key>.pt2) is copied there; else it is made (about a minute
per package on two cores) and cached.

The modules compute what worker/runner/workload.cpp computes, in the same order:
  kernel: (q, k, v[, mask]) -> O                    q [B, Hq, Sq, D], k, v [B, Hkv, Sk, D]
  block:  (x, wqkv, wo, k_cache, v_cache[, mask]) -> out [B, Sq, hidden]
  layer:  (x, wqkv, wo, k_cache, v_cache, norm1, norm2, w1, w2[, w3][, mask]) -> out
The new keys and values replace the cache's last Sq positions (a functional form of the
harness's in-place write: the package returns only the output).

Exit codes as attnprof's: 0 done, 2 bad input (a scenario whose cases disagree on a package),
3 environment (no GPU for a CUDA package, attnprof not found, a failed compile).
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile

FORMAT = 1
SCRIPT = "ci/aoti-package.sh"
HERE = os.path.dirname(os.path.abspath(__file__))

# Dynamic dims get these ranges (the package accepts any size inside; attnprof skips a case
# outside, naming the dim). Batch starts at 1; the example inputs use 2, since torch.export
# specializes a dim whose example size is 1.
MAX_BATCH = 256


STATUS = None  # --status FILE: where `attnprof package` reads how far this script got
STEP = ("starting", "")


def stage(what, where=""):
    """Notes what the script does next, and where: `attnprof package` names it when this process
    ends without finishing (a module that calls os._exit or crashes while imported, called or
    exported leaves no message of its own). "done" once the script has decided its exit code."""
    global STEP
    STEP = (what, where)
    if STATUS:
        with open(STATUS, "a") as f:
            f.write(f"{what}\t{where}\n")


def user_failure(exc, user_file, what):
    """A failure in (or under) the user's module as one line: the last frame in their file (else
    the last frame), the exception, and the log file the whole traceback went to."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if f.filename == user_file]
    at = mine[-1] if mine else (frames[-1] if frames else None)
    where = f"{at.filename}:{at.lineno}" if at else user_file
    fd, log = tempfile.mkstemp(prefix="attnprof-package-", suffix=".log")
    with os.fdopen(fd, "w") as f:
        f.write("".join(traceback.format_exception(exc)))
    text = f"{where}: {what}: {exc.__class__.__name__}: {exc}".replace("\n", " ")
    if len(text) > 600:
        text = text[:600] + "..."
    if isinstance(exc, ImportError):
        text += (f" (python {sys.version.split()[0]} of {sys.executable}; ATTNPROF_PYTHON="
                 "/path/to/python picks another, whose torch attnprof is then built with)")
    return f"{text} (traceback: {log})"


class Refused(Exception):
    """A package this scenario cannot have: (exit code, message)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class NoDynamicDims(Exception):
    """Export refused dynamic dims and the package's cases have several shapes: it becomes one
    package per shape (make_per_shape). The message is export's reason."""


def shape_name(case):
    """A case's shape as per-shape packages name it: b<batch>-q<q_len>-kv<kv_len>."""
    return f"b{case['batch']}-q{case['q_len']}-kv{case['kv_len']}"


def by_shape(cases):
    """{shape_name: [cases]} in the cases' order."""
    groups = {}
    for c in cases:
        groups.setdefault(shape_name(c), []).append(c)
    return groups


def shape_package(path, shape):
    """Where the package of one shape lies: PATH's stem plus .<shape>.pt2, beside PATH."""
    stem = path[:-4] if path.endswith(".pt2") else path
    return f"{stem}.{shape}.pt2"


def shapes_index(path):
    """Where a package's per-shape index lies: PATH.shapes.json beside PATH (attnprof-worker
    reads it, worker/kernel/variants/aoti.cpp)."""
    return path + ".shapes.json"


def attnprof_cases(attnprof, scenario):
    proc = subprocess.run([attnprof, "list", scenario, "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise Refused(proc.returncode, f"attnprof list {scenario} failed")
    return json.loads(proc.stdout)


def torch_version():
    import torch

    return torch.__version__


def cuda_available():
    import torch

    return torch.cuda.is_available()


def module_spec(case, role="package", user=None):
    """What a package holds, from one case: cases that share a package must agree on it. role:
    "package" (the case's kernel) or "reference_package" (its reference: in fp32). user: the
    user's module (--module), whose scale and causality are its own."""
    m = case["model"]
    decode = case["q_len"] != case["kv_len"]
    calls = case[role]
    return {
        "level": case["level"],
        "device": case["hardware"]["device"],
        "dtype": "fp32" if role == "reference_package" else case["dtype"],
        "model": {
            k: m[k] for k in ("name", "heads", "kv_heads", "head_dim", "hidden", "mlp_hidden", "norm")
        },
        "mask": case["mask"],
        "window": case["window"],
        "scale": None if user else calls["scale"],
        "phase": "decode" if decode else "prefill",
        "q_len": case["q_len"] if decode else None,
        "mask_input": calls["mask_input"],
        "is_causal": None if user else calls["is_causal"],
        "module": user,
    }


def hidden_of(m):
    return m["hidden"] if m["hidden"] > 0 else m["heads"] * m["head_dim"]


def mlp_of(m):
    return m["mlp_hidden"] if m["mlp_hidden"] > 0 else 4 * hidden_of(m)


def input_dims(spec, cases):
    """Per input, its dims: an int when static, {"name", "min", "max"} when dynamic."""
    m = spec["model"]
    hq, hkv, d = m["heads"], m["kv_heads"], m["head_dim"]
    hidden = hidden_of(m)
    custom = spec["mask"] == "custom"
    max_pos = max(2, max(c["model"]["max_positions"] or c["kv_len"] for c in cases))
    max_kv = max(max_pos, max(c["kv_len"] for c in cases))
    static = custom  # a custom mask file fixes Sq x Sk
    batch = (
        cases[0]["batch"] if static else {"name": "batch", "min": 1, "max": max(MAX_BATCH, *(c["batch"] for c in cases))}
    )
    if static:
        sq, sk = cases[0]["q_len"], cases[0]["kv_len"]
    elif spec["phase"] == "prefill":
        sq = sk = {"name": "seq", "min": 2, "max": max_kv}
    else:
        sq = spec["q_len"]
        sk = {"name": "kv", "min": sq + 2, "max": max_kv}  # export guards Sk - Sq != 1
    inputs = []
    if spec["level"] == "kernel":
        inputs += [("q", [batch, hq, sq, d]), ("k", [batch, hkv, sk, d]), ("v", [batch, hkv, sk, d])]
    else:
        inputs += [
            ("x", [batch, sq, hidden]),
            ("wqkv", [hidden, (hq + 2 * hkv) * d]),
            ("wo", [hq * d, hidden]),
            ("k_cache", [batch, hkv, sk, d]),
            ("v_cache", [batch, hkv, sk, d]),
        ]
        if spec["level"] == "layer":
            mlp = mlp_of(m)
            inputs += [("norm1", [hidden]), ("norm2", [hidden]), ("w1", [hidden, mlp]), ("w2", [mlp, hidden])]
            if m["norm"] == "rmsnorm":
                inputs.append(("w3", [hidden, mlp]))
    if spec["mask_input"]:
        padded = any(c["seq_lens"] for c in cases)
        inputs.append(("mask", [batch if (not custom or padded) else 1, 1, sq, sk]))
    return [{"name": n, "dims": dims} for n, dims in inputs]


def check_cases(path, cases, user=None):
    """The spec the cases agree on, or Refused naming the first two that differ. cases: (case,
    role) pairs."""
    first = cases[0][0]
    spec = module_spec(*cases[0], user)
    for c, role in cases[1:]:
        other = module_spec(c, role, user)
        for k in spec:
            if spec[k] != other[k]:
                raise Refused(
                    2,
                    f"{c['loc']['file']}:{c['loc']['line']}: package {path}: case {c['key']} needs "
                    f"{k} {json.dumps(other[k])} but {first['key']} needs {json.dumps(spec[k])}: "
                    "one package holds one module; name another package",
                )
    cases = [c for c, _ in cases]
    if spec["level"] != "kernel":
        for c in cases:
            if c["seq_lens"]:
                raise Refused(
                    2,
                    f"{c['loc']['file']}:{c['loc']['line']}: package {path}: {c['key']} has "
                    "per-sequence lengths; block and layer packages write the K/V cache at one "
                    "position for every sequence, so they take cases without seq_lens",
                )
    if spec["mask"] == "custom":
        shapes = {(c["batch"], c["q_len"], c["kv_len"]) for c in cases}
        if len(shapes) > 1:
            raise Refused(2, f"package {path}: a custom mask fixes the shapes, but its cases have {sorted(shapes)}")
    return spec


def content_key(spec, inputs, version):
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(version.encode())
    # A user's module by its bytes, name and arguments, not where the file lies: the same module
    # copied elsewhere (a test's temporary folder, another checkout) is the same package.
    if spec.get("module"):
        spec = {**spec, "module": {k: v for k, v in spec["module"].items() if k != "file"}}
    h.update(json.dumps({"spec": spec, "inputs": inputs}, sort_keys=True).encode())
    return h.hexdigest()[:32]


def package_metadata(path):
    """Our metadata of a package, or None (missing, not a zip, not ours)."""
    try:
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if name.endswith("wrapper_metadata.json"):
                    meta = json.loads(z.read(name))
                    return json.loads(meta["attnprof"]) if "attnprof" in meta else None
    except (OSError, zipfile.BadZipFile, ValueError, KeyError):
        return None
    return None


# --- the modules ----------------------------------------------------------------------------


def make_module(spec):
    import torch
    import torch.nn.functional as F

    m = spec["model"]
    hq, hkv, d = m["heads"], m["kv_heads"], m["head_dim"]
    scale, is_causal, gqa = spec["scale"], spec["is_causal"], m["heads"] != m["kv_heads"]
    rms = m["norm"] == "rmsnorm"

    def attend(q, k, v, mask):
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=is_causal, scale=scale, enable_gqa=gqa
        )

    def norm(x, w):
        if rms:
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w
        return F.layer_norm(x, (x.shape[-1],), w)

    def block(x, wqkv, wo, k_cache, v_cache, mask):
        b, sq = x.shape[0], x.shape[1]
        sk = k_cache.shape[2]
        q, k_new, v_new = (x @ wqkv).split([hq * d, hkv * d, hkv * d], -1)
        q = q.view(b, sq, hq, d).transpose(1, 2)
        k_new = k_new.view(b, sq, hkv, d).transpose(1, 2)
        v_new = v_new.view(b, sq, hkv, d).transpose(1, 2)
        if spec["phase"] == "prefill":  # the whole cache is new
            k, v = k_new, v_new
        else:
            k = torch.cat([k_cache[:, :, : sk - sq], k_new], 2)
            v = torch.cat([v_cache[:, :, : sk - sq], v_new], 2)
        o = attend(q.contiguous(), k.contiguous(), v.contiguous(), mask)
        return o.transpose(1, 2).reshape(b, sq, hq * d) @ wo

    level = spec["level"]

    class Kernel(torch.nn.Module):
        def forward(self, q, k, v, mask=None):
            return attend(q, k, v, mask)

    class Block(torch.nn.Module):
        def forward(self, x, wqkv, wo, k_cache, v_cache, mask=None):
            return block(x, wqkv, wo, k_cache, v_cache, mask)

    class Layer(torch.nn.Module):
        # After w2 come w3 (gated MLP only) and then the mask (when the case takes one).
        def forward(self, x, wqkv, wo, k_cache, v_cache, norm1, norm2, w1, w2, a=None, b=None):
            w3 = a if rms else None
            mask = (b if rms else a) if spec["mask_input"] else None
            r = x + block(norm(x, norm1), wqkv, wo, k_cache, v_cache, mask)
            h = norm(r, norm2)
            up = h @ w1
            act = F.silu(up) * (h @ w3) if rms else F.gelu(up)
            return r + act @ w2

    return {"kernel": Kernel, "block": Block, "layer": Layer}[level]()


# --- the user's module (--module FILE:NAME) ------------------------------------------------


def parse_module_arg(text, args):
    """FILE:NAME and NAME=VALUE pairs -> the user spec (file, name, args, the file's hash)."""
    path, sep, name = text.rpartition(":")
    if not sep or not path or not name.isidentifier():
        raise Refused(2, f"{text}: expected FILE.py:NAME (a class, or a function returning an nn.Module)")
    if not os.path.isfile(path):
        raise Refused(2, f"{path}: no such file (from {text})")
    values = {}
    for a in args:
        key, eq, value = a.partition("=")
        if not eq or not key.isidentifier():
            raise Refused(2, f"--arg {a}: expected NAME=VALUE")
        try:
            values[key] = json.loads(value)
        except ValueError:
            values[key] = value
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"file": os.path.abspath(path), "name": name, "args": values, "sha256": digest}


def load_user_module(user):
    """The user's object (class or factory) and where it is written: (obj, "file:line")."""
    import importlib.util
    import inspect

    path = user["file"]
    sys.path.insert(0, os.path.dirname(path))  # the module may import its neighbours
    spec = importlib.util.spec_from_file_location("attnprof_user_module", path)
    mod = importlib.util.module_from_spec(spec)
    stage("importing", path)
    try:
        spec.loader.exec_module(mod)
    except SystemExit as e:  # not an Exception: it would end this script with the module's code
        raise Refused(2, f"{path}: importing it called sys.exit({e.code!r}): a module to package "
                         "must not exit when imported")
    except Exception as e:
        raise Refused(2, user_failure(e, path, "importing it failed"))
    obj = getattr(mod, user["name"], None)
    if obj is None:
        names = [n for n, v in vars(mod).items() if inspect.isclass(v) or inspect.isfunction(v)]
        raise Refused(2, f"{path}: defines no {user['name']} (it defines: {', '.join(names) or 'nothing'})")
    try:
        line = inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        line = 0
    return obj, f"{path}:{line}"


def instantiate(user, spec):
    import inspect

    import torch

    obj, where = load_user_module(user)
    stage(f"making {user['name']}", where)
    try:
        module = obj(**user["args"])
    except SystemExit as e:
        raise Refused(2, f"{where}: {user['name']}(...) called sys.exit({e.code!r})")
    except TypeError as e:
        raise Refused(2, f"{where}: {user['name']}({', '.join(f'{k}={v!r}' for k, v in user['args'].items())}): {e}")
    if not isinstance(module, torch.nn.Module):
        raise Refused(2, f"{where}: {user['name']} gave a {type(module).__name__}, not a torch.nn.Module")
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[spec["dtype"]]
    # As a model is made ready for inference: on the case's device, its floating-point weights
    # and buffers at the package's dtype.
    return module.to(device=spec["device"], dtype=dtype).eval(), forward_at(user, module, where)


def forward_at(user, module, made_at):
    """Where a refusal of the module's forward points: forward's line in the user's file; for a
    module a factory in the user's file made from another file's class (transformers' attention,
    say), the factory's line there, then the class and the file and line of its forward."""
    import inspect

    forward = inspect.unwrap(type(module).forward)
    try:
        file, line = inspect.getsourcefile(forward), inspect.getsourcelines(forward)[1]
    except (OSError, TypeError):
        file, line = None, 0
    if file and os.path.abspath(file) == os.path.abspath(user["file"]):
        return f"{user['file']}:{line}"
    return (f"{made_at}: {user['name']} made {type(module).__name__}, whose forward is at "
            f"{file or '?'}:{line}")


def check_signature(user, module, forward_src, inputs, case):
    """Refused, naming forward's file and line, when forward cannot take the case's inputs."""
    import inspect

    sig = inspect.signature(module.forward)
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    star = any(p.kind == p.VAR_POSITIONAL for p in params)
    names = [i["name"] for i in inputs]
    if len(required) <= len(names) and (star or len(positional) >= len(names)):
        return
    where = forward_src
    shown = f"{user['name']}.forward({', '.join(p.name for p in params)})"
    if "mask" in names and not star and len(positional) < len(names):
        hint = (f"mask {case['mask']} is passed to the module as its last input (docs/scenarios.md, "
                "\"Compiled packages\", has its layout): give forward a mask parameter, or run a "
                "module that masks itself with mask: none")
    else:
        hint = "forward takes what a case at this level passes, in that order (docs/scenarios.md)"
    raise Refused(2, f"{where}: {shown} cannot be called with the {len(names)} inputs "
                     f"({', '.join(names)}) that {case['key']} passes: {hint}")


def check_output(user, module, forward_src, spec, inputs, case):
    """Refused, naming forward's file and line, when one call of forward on example inputs raises
    or returns other than one tensor of the shape a case reads back: q's [B, Hq, Sq, D] for a
    kernel, x's [B, Sq, hidden] for a block or layer, the first input's either way. Checked
    before the export: a wrong shape was packaged and failed only when a case ran it."""
    import torch

    where = forward_src
    args = example_inputs(spec, inputs)
    shown = ", ".join(f"{i['name']} {list(a.shape)}" for i, a in zip(inputs, args))
    stage(f"calling {user['name']}.forward", where)
    try:
        with torch.no_grad():
            out = module(*args)
    except SystemExit as e:
        raise Refused(2, f"{where}: {user['name']}.forward called sys.exit({e.code!r})")
    except Exception as e:
        raise Refused(2, f"{where}: {user['name']}.forward({shown}) raised "
                         f"{e.__class__.__name__}: {e}")
    want = list(args[0].shape)
    first = inputs[0]["name"]
    if not isinstance(out, torch.Tensor):
        raise Refused(2, f"{where}: {user['name']}.forward({shown}) returned a "
                         f"{type(out).__name__}, not a tensor of {first}'s shape {want}")
    if list(out.shape) != want:
        raise Refused(2, f"{where}: {user['name']}.forward({shown}) returned shape "
                         f"{list(out.shape)}; {case['key']} reads back {first}'s shape {want} "
                         f"({spec['level']} level, docs/scenarios.md)")


def example_inputs(spec, inputs):
    import torch

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[spec["dtype"]]
    device = spec["device"]
    gen = torch.Generator().manual_seed(0)

    def size(dim):
        if isinstance(dim, int):
            return dim
        return 2 if dim["name"] == "batch" else min(dim["max"], max(dim["min"], 16))

    out = []
    for inp in inputs:
        shape = [size(dim) for dim in inp["dims"]]
        if inp["name"] == "mask":
            t = torch.ones(shape, dtype=torch.bool) if spec["mask"] != "custom" else torch.zeros(shape)
            out.append(t.to(device, torch.bool if spec["mask"] != "custom" else dtype))
        else:
            out.append((torch.randn(shape, generator=gen) * 0.1).to(device, dtype))
    return out


def dynamic_shapes(inputs):
    import torch

    dims = {}
    spec = []
    for inp in inputs:
        per = {}
        for i, dim in enumerate(inp["dims"]):
            if isinstance(dim, dict):
                if dim["name"] not in dims:
                    dims[dim["name"]] = torch.export.Dim(dim["name"], min=dim["min"], max=dim["max"])
                per[i] = dims[dim["name"]]
        spec.append(per or None)
    return tuple(spec)


def static_inputs(inputs, cases):
    """The same inputs with every dim fixed at the first case's sizes."""
    c = cases[0]
    sizes = {"batch": c["batch"], "seq": c["q_len"], "kv": c["kv_len"]}
    return [
        {"name": i["name"], "dims": [d if isinstance(d, int) else sizes[d["name"]] for d in i["dims"]]}
        for i in inputs
    ]


def build(spec, inputs, cases, meta, out_path, log, module=None, static_key=None):
    import torch

    module = module if module is not None else make_module(spec)
    started = time.time()
    notes = []
    try:
        ep = torch.export.export(
            module, tuple(example_inputs(spec, inputs)), dynamic_shapes=dynamic_shapes(inputs)
        )
    except Exception as e:  # Inductor or export refusing dynamic dims for this module
        if all(isinstance(d, int) for i in inputs for d in i["dims"]):
            raise
        if len(by_shape(cases)) > 1:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise NoDynamicDims(f"{e.__class__.__name__}: {first}") from e
        notes.append(f"static shapes: export refused dynamic dims ({e.__class__.__name__})")
        inputs[:] = static_inputs(inputs, cases)
        meta["inputs"] = inputs
        if static_key:  # it holds one shape now: cached under that shape's key (make_one)
            meta["key"] = static_key
        ep = torch.export.export(module, tuple(example_inputs(spec, inputs)))
    meta["notes"] = notes
    exported = time.time()
    tmp_dir = os.path.dirname(out_path)
    fd, tmp = tempfile.mkstemp(suffix=".pt2", dir=tmp_dir)
    os.close(fd)
    try:
        torch._inductor.aoti_compile_and_package(
            ep,
            package_path=tmp,
            inductor_configs={
                "aot_inductor.metadata": {"attnprof": json.dumps(meta, sort_keys=True)},
                # Inductor's CPU kernels open a RecordFunction each, so attnprof's cost matrix
                # shows them under the package's call (GPU kernels come through CUPTI anyway).
                "cpp.enable_kernel_profile": True,
            },
        )
        os.replace(tmp, out_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    log(
        f"  exported in {exported - started:.1f} s, packaged in {time.time() - exported:.1f} s, "
        f"{os.path.getsize(out_path) / 1024:.0f} KiB" + "".join(f"; {n}" for n in notes)
    )


def collect(attnprof, scenario, output):
    """{package path: [(case, role)]}: every package the scenario's kernels name, or with
    --module (output given) the one at `output`, as kernel or reference."""
    packages = {}
    want = os.path.abspath(output) if output else None
    for c in attnprof_cases(attnprof, scenario):
        for role in ("package", "reference_package") if want else ("package",):
            if role in c and (want is None or c[role]["path"] == want):
                packages.setdefault(c[role]["path"], []).append((c, role))
    if want and not packages:
        raise Refused(2, f"{scenario}: no case names {want} as its kernel or reference: name "
                         f"\"aoti:{os.path.relpath(want, os.path.dirname(os.path.abspath(scenario)))}\" in "
                         "kernels: or reference: first")
    return packages


def make_per_shape(path, spec, inputs, cases, meta, version, args, log, module, why):
    """One static package per shape of `cases` where export refused dynamic dims: PATH's stem
    plus .<shape>.pt2 beside PATH, each cached under its own shape's key, PATH itself the first
    shape's, and PATH.shapes.json naming them all, which attnprof-worker reads to load a case's
    own. The scenario keeps naming PATH: one kernel name, one case key per kernel."""
    groups = by_shape(cases)
    index = {"why": why, "shapes": {}, "keys": {}}
    for shape, group in groups.items():
        s_inputs = static_inputs(inputs, group)
        s_key = content_key(spec, s_inputs, version)
        cached = os.path.join(args.cache, s_key + ".pt2")
        if args.force or not os.path.isfile(cached):
            log(f"  {shape}: making its own package ({len(group)} case(s))")
            build(spec, s_inputs, group, {**meta, "key": s_key, "inputs": s_inputs}, cached, log,
                  module)
        else:
            log(f"  {shape}: from the cache ({cached})")
        sibling = shape_package(path, shape)
        shutil.copyfile(cached, sibling + ".tmp")
        os.replace(sibling + ".tmp", sibling)
        index["shapes"][shape] = os.path.basename(sibling)
        index["keys"][shape] = s_key
    first = shape_package(path, next(iter(groups)))
    shutil.copyfile(first, path + ".tmp")
    os.replace(path + ".tmp", path)
    with open(shapes_index(path) + ".tmp", "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
    os.replace(shapes_index(path) + ".tmp", shapes_index(path))
    log(f"{path}: export refused dynamic dims ({why}): one package per shape, "
        f"{', '.join(os.path.basename(f) for f in index['shapes'].values())}, indexed in "
        f"{os.path.basename(shapes_index(path))}; the scenario names {os.path.basename(path)} for "
        f"all {len(cases)} case(s), and each runs its shape's")


def per_shape_up_to_date(path, spec, inputs, cases, version):
    """Whether PATH's per-shape packages are there and made for these cases' shapes."""
    try:
        with open(shapes_index(path)) as f:
            index = json.load(f)
    except (OSError, ValueError):
        return False
    for shape, group in by_shape(cases).items():
        key = content_key(spec, static_inputs(inputs, group), version)
        if index.get("keys", {}).get(shape) != key:
            return False
        have = package_metadata(shape_package(path, shape))
        if not have or have.get("key") != key:
            return False
    return True


def make_one(path, cases, user, version, args, log):
    spec = check_cases(path, cases, user)
    bare = [c for c, _ in cases]
    inputs = input_dims(spec, bare)
    key = content_key(spec, inputs, version)
    # Where export refuses dynamic dims, the package holds its cases' one shape: it is cached
    # under a key with that shape (static_key), never under the dynamic one, so that the same
    # module for another shape is made anew instead of served this one.
    static_key = content_key(spec, static_inputs(inputs, bare), version)
    have = package_metadata(path)
    # A user's package (attnprof package) is theirs: this script makes attnprof's own SDPA
    # modules and never puts one under a user's file name, --force or not.
    if not user and have and have.get("script") == "attnprof package":
        raise Refused(
            2,
            f"{path} was made by attnprof package from {have.get('module', 'a module')}: this "
            f"script makes attnprof's own SDPA modules and leaves it alone; make it again with "
            f"attnprof package {have.get('module', 'FILE.py:NAME')} --scenario SCENARIO -o {path}",
        )
    several = len(by_shape(bare)) > 1
    if not args.force and several and per_shape_up_to_date(path, spec, inputs, bare, version):
        log(f"{path}: up to date (one package per shape, {os.path.basename(shapes_index(path))})")
        return
    if not args.force and have and have.get("key") in (key, static_key) and not several:
        log(f"{path}: up to date")
        if os.path.exists(shapes_index(path)):
            os.unlink(shapes_index(path))
        return
    cached = os.path.join(args.cache, key + ".pt2")
    static_cached = os.path.join(args.cache, static_key + ".pt2")
    # A one-shape package from the cache serves one shape only: never cases of several.
    if not args.force and not several and not os.path.isfile(cached) and os.path.isfile(static_cached):
        cached = static_cached
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if args.force or not os.path.isfile(cached):
        if spec["device"].startswith("cuda") and not cuda_available():
            raise Refused(
                3,
                f"{path}: a package for {spec['device']} must be made on a machine with "
                "that GPU (torch.cuda.is_available() is False here): run this script there",
            )
        module = None
        if user:  # refused before the export's half minute, at forward's line
            module, src = instantiate(user, spec)
            check_signature(user, module, src, inputs, bare[0])
            check_output(user, module, src, spec, inputs, bare[0])
        what = (f"{user['name']} from {os.path.basename(user['file'])}" if user
                else f"attnprof's own SDPA {spec['level']} module")
        log(f"{path}: making {what} for {len(cases)} case(s), {spec['level']} level, "
            f"{spec['model']['name']} {spec['dtype']} {spec['device']}, inputs "
            f"({', '.join(i['name'] for i in inputs)})")
        meta = {
            "format": FORMAT,
            "script": "attnprof package" if user else SCRIPT,
            "torch": version,
            "key": key,
            "level": spec["level"],
            "device": spec["device"],
            "dtype": spec["dtype"],
            "model": spec["model"],
            "phase": spec["phase"],
            "mask": spec["mask"],
            "mask_input": spec["mask_input"],
            "window": spec["window"],
            "scale": spec["scale"],
            "is_causal": spec["is_causal"],
            "inputs": inputs,
        }
        if user:
            meta["module"] = f"{os.path.basename(user['file'])}:{user['name']}"
            meta["args"] = user["args"]
        stage("exporting", user["file"] if user else path)
        try:
            try:
                build(spec, inputs, bare, meta, cached, log, module, static_key)
            except NoDynamicDims as e:
                make_per_shape(path, spec, inputs, bare, meta, version, args, log, module, str(e))
                return
        except Refused:
            raise
        except Exception as e:  # the user's module that export or Inductor refused: theirs to fix
            if not user:
                raise
            raise Refused(2, user_failure(e, user["file"], f"exporting {user['name']} failed"))
        if meta["key"] == static_key and cached != static_cached:
            os.replace(cached, static_cached)
            cached = static_cached
    else:
        log(f"{path}: from the cache ({cached})")
    tmp = path + ".tmp"
    shutil.copyfile(cached, tmp)
    os.replace(tmp, path)
    if os.path.exists(shapes_index(path)):  # one package for every shape now
        os.unlink(shapes_index(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", help="a scenario file that names aoti: packages")
    ap.add_argument("--attnprof", default=os.environ.get("ATTNPROF_BIN", os.path.join(HERE, "..", "build", "attnprof")),
                    help="the attnprof executable (default: build/attnprof, or $ATTNPROF_BIN)")
    ap.add_argument("--cache", default=os.path.join(os.environ.get("ATTNPROF_HOME", os.path.expanduser("~/.cache/attnprof")), "aoti"),
                    help="the content-addressed package cache (default: $ATTNPROF_HOME/aoti)")
    ap.add_argument("--force", action="store_true", help="make every package anew, cache or not")
    ap.add_argument("--module", help="FILE.py:NAME, the user's module (a class or a factory) to package")
    ap.add_argument("--arg", action="append", default=[], help="NAME=VALUE for the module's constructor (repeatable)")
    ap.add_argument("-o", "--output", help="with --module: the package to make (a path the scenario names)")
    ap.add_argument("--status", help="a file to note each step in (attnprof package reads it)")
    args = ap.parse_args()
    global STATUS
    STATUS = args.status
    try:
        rc = run(args)
    except SystemExit as e:  # the module's own, from a call inside torch (the export's trace)
        print(f"error: {STEP[1]}: sys.exit({e.code!r}) while {STEP[0]}", file=sys.stderr)
        rc = 2
    except Exception:  # a failure of this script or of torch: the traceback says where
        traceback.print_exc()
        rc = 3
    stage("done")
    return rc


def run(args):
    log = lambda s: print(s, flush=True)  # noqa: E731

    try:
        if bool(args.module) != bool(args.output):
            raise Refused(2, "--module and -o go together: the module, and the package the scenario names")
        user = parse_module_arg(args.module, args.arg) if args.module else None
        if not os.access(args.attnprof, os.X_OK):
            raise Refused(3, f"{args.attnprof}: no attnprof executable (build it, or pass --attnprof)")
        packages = collect(args.attnprof, args.scenario, args.output)
        if not packages:
            log(f"{args.scenario}: names no aoti: package")
            return 0
        version = torch_version()
        import torch

        log(f"torch {version} ({os.path.dirname(torch.__file__)}), python {sys.executable}")
        os.makedirs(args.cache, exist_ok=True)
        failed = 0
        for path, cases in packages.items():
            try:
                make_one(path, cases, user, version, args, log)
            except Refused as e:
                print(f"error: {e}", file=sys.stderr)
                if e.code == 2:
                    return 2
                failed += 1
        return 3 if failed else 0
    except Refused as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code


if __name__ == "__main__":
    sys.exit(main())
