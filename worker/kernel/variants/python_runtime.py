# attnprof-worker's side of "py:" kernels, run in the interpreter it embeds (python.cpp builds this
# file into the worker). It imports the user's file, makes the callable a case calls (the class
# instantiated with the scenario's kernel_args, or a factory's result, or the function itself),
# wraps it in torch.compile for a mode, reads Dynamo's counters, and turns an exception into
# the user's file and line. Timing, tracing and checking stay in C++, as for every kernel.
import faulthandler
import importlib.util
import inspect
import json
import os
import shutil
import sys
import tempfile
import traceback

import torch

# A module that kills the interpreter leaves no exception to describe: what it leaves instead is
# its stack on the worker's stderr, most recent call first, which attnprof reads for the user's
# last frame (harness/kernel/python.h, python_frame). faulthandler writes it for a fatal signal;
# os._exit is wrapped to write it too, and then exits as it would have.
faulthandler.enable()
_os_exit = os._exit


def _exit_saying_where(status):
    lines = [f"attnprof: os._exit({status}) called (most recent call first):"]
    for f in reversed(traceback.extract_stack()[:-1]):
        lines.append(f'  File "{f.filename}", line {f.lineno} in {f.name}')
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    _os_exit(status)


os._exit = _exit_saying_where

_modules = {}  # absolute path -> the imported module (one import per file and worker)
_fresh_cache = None  # the Inductor cache folder the current compile variant made for itself
_default_cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}  # a case's dtype


class UserError(Exception):
    """Bad input the user fixes in their own file: the message names it (and a line)."""


def python_note():
    return (f"Python {sys.version.split()[0]} of {sys.executable}: attnprof-worker embeds the "
            f"python its torch came from; to use another environment's packages, build attnprof "
            f"with ATTNPROF_PYTHON=/path/to/python")


def _load(path):
    if path in _modules:
        return _modules[path]
    if not os.path.isfile(path):
        raise UserError(f"{path}: no such file (a py: kernel's PATH is relative to the scenario)")
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # the module may import its neighbours, as under python FILE
    name = "attnprof_user_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _modules[path] = module
    return module


def _takes_inputs(fn, count):
    """Whether fn's required positional parameters take the case's inputs (the attention
    function itself, not a factory)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
    return len(positional) >= count


def where(obj):
    """FILE:LINE of what a case calls: a module's forward, a function, a callable's __call__."""
    target = obj
    if isinstance(obj, torch.nn.Module):
        target = type(obj).forward
    elif not (inspect.isfunction(obj) or inspect.ismethod(obj)):
        target = type(obj).__call__
    target = inspect.unwrap(target)
    try:
        return f"{inspect.getsourcefile(target)}:{inspect.getsourcelines(target)[1]}"
    except (TypeError, OSError):
        return getattr(target, "__qualname__", repr(target))


def _defined_at(obj):
    """FILE:LINE where a class or function is defined."""
    try:
        return f"{inspect.getsourcefile(obj)}:{inspect.getsourcelines(obj)[1]}"
    except (TypeError, OSError):
        return getattr(obj, "__qualname__", repr(obj))


def _construct(obj, name, args):
    """obj(**args), a TypeError (arguments that do not fit) naming where obj is defined."""
    try:
        return obj(**args)
    except TypeError as e:
        given = ", ".join(f"{k}={v!r}" for k, v in args.items())
        raise UserError(f"{_defined_at(obj)}: {name}({given}): {e} (its arguments come from the "
                        f"scenario's kernel_args)") from e


def make(path, name, args_json, inputs, device, dtype):
    """The callable a case calls, and FILE:LINE of its forward."""
    module = _load(path)
    if not hasattr(module, name):
        found = sorted(n for n, v in vars(module).items()
                       if not n.startswith("_") and callable(v)
                       and getattr(v, "__module__", None) == module.__name__)
        raise UserError(f"{path}: has no {name} (it defines: {', '.join(found) or 'nothing callable'})")
    obj = getattr(module, name)
    args = json.loads(args_json) if args_json else {}
    if inspect.isclass(obj):
        made = _construct(obj, name, args)
    elif callable(obj) and not args and _takes_inputs(obj, inputs):
        made = obj  # the attention function itself
    elif callable(obj):
        made = _construct(obj, name, args)  # a factory
        if not callable(made):
            raise UserError(f"{where(obj)}: {name}(...) returned {type(made).__name__}, not a "
                            f"module or function to call")
    else:
        raise UserError(f"{path}: {name} is a {type(obj).__name__}, not a class or function")
    if isinstance(made, torch.nn.Module):
        made = made.to(device=torch.device(device), dtype=_DTYPES[dtype]).eval()
    return made, where(made)


def compile(fn, mode, warm_cache):
    """(fn under torch.compile in `mode`, the fresh Inductor cache folder or ""): from a fresh
    cache unless warm_cache. Dynamo's caches are reset first, so each case compiles for itself."""
    from torch._inductor import list_mode_options

    if mode not in list_mode_options():
        raise UserError(f"torch {torch.__version__} has no torch.compile mode \"{mode}\" (it has: "
                        f"{', '.join(list_mode_options())})")
    cache = compile_state(warm_cache)
    return torch.compile(fn, mode=None if mode == "default" else mode), cache


def compile_state(warm_cache):
    """Readies a compile that is the case's own: Dynamo reset, Inductor's modules imported and
    its cache fresh (a new folder, returned) unless warm_cache (then "")."""
    global _fresh_cache
    # Inductor's modules are imported here, before the compile is timed, so that the first
    # compiled case of a worker does not pay for them and the next ones not: each case's compile
    # time is its compile's.
    import torch._inductor.codecache  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401
    import torch._inductor.utils

    torch.compiler.reset()
    if _fresh_cache:
        shutil.rmtree(_fresh_cache, ignore_errors=True)
        _fresh_cache = None
    if warm_cache:
        if _default_cache is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = _default_cache
    else:
        # A fresh cache is an empty folder and empty in-memory caches (compiled kernels are kept
        # in the process by their source's hash, whatever the folder).
        _fresh_cache = tempfile.mkdtemp(prefix="attnprof-inductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = _fresh_cache
        torch._inductor.utils.clear_caches()
    # Each generated C++ kernel in a RECORD_FUNCTION of its own name: the cost matrix then shows
    # what Inductor fused, kernel by kernel (the fusion map). A no-op outside a traced pass.
    torch._inductor.config.cpp.enable_kernel_profile = True
    return _fresh_cache or ""


def compile_counters():
    """Dynamo's counts so far: graphs compiled, graph breaks, frames compiled."""
    from torch._dynamo.utils import counters

    return {
        "graphs": counters["stats"]["unique_graphs"],
        "graph_breaks": sum(counters["graph_break"].values()),
        "frames": counters["frames"]["total"],
    }


def describe(exc, user_file):
    """(one line naming the user's file and line, the whole traceback) for an exception."""
    loc = None
    if isinstance(exc, SyntaxError) and exc.filename:
        loc = f"{exc.filename}:{exc.lineno}"
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        user_dir = os.path.dirname(user_file)
        mine = [f for f in frames if f.filename == user_file] or \
               [f for f in frames if f.filename.startswith(user_dir + os.sep)]
        if mine:
            loc = f"{mine[-1].filename}:{mine[-1].lineno}"
        elif frames:
            loc = f"{frames[-1].filename}:{frames[-1].lineno}"
    text = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ImportError):
        text += f" ({python_note()})"
    line = text if isinstance(exc, UserError) or not loc else f"{loc}: {text}"
    return line, "".join(traceback.format_exception(exc))
