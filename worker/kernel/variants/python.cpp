// Python attention as a kernel: "py:PATH.py:NAME" imports the user's file in the interpreter
// attnprof-worker embeds (the python its torch came from; libtorch_python bridges the tensors)
// and calls NAME as production calls it, eagerly; "py:PATH.py:NAME@MODE" calls it under
// torch.compile in that mode. The runner's timers, tracer and memory watch measure the call like
// any other launch: one methodology. Each call runs inside a user scope named after the module
// ("python: attn.py:Attn"), whose self time in the cost matrix is the interpreter's share of the
// call (its time outside the ATen ops and compiled kernels it ran).
//
// Per case, before anything is timed (Variant::prepare): the file is imported once per worker,
// NAME made into the callable (a class instantiated with the scenario's kernel_args, a factory
// called with them, or the attention function itself), moved to the case's device and dtype when
// it is a module, and wrapped in torch.compile for a mode, from a fresh Inductor cache unless the
// scenario says compile_cache: warm. A compile happens at the first call, which is the
// correctness check's; its time and Dynamo's graph and graph-break counts are the case's
// compile.* metrics, and the frames compiled after it its recompiles.
//
// Calling convention, as aoti: packages (docs/python.md): kernel level (q, k, v[, mask]) -> O
// [B, Hq, Sq, D]; block level (x, wqkv, wo, k_cache, v_cache[, mask]) and layer level (... norm1,
// norm2, w1, w2[, w3][, mask]) -> [B, Sq, hidden]. A tuple's first element is the output (as
// transformers' attention functions return). Every call's output is checked for shape, dtype and
// device, naming forward's file and line. A Python exception is the case's error, naming the last
// frame in the user's file, with the whole traceback in a log file the message names.
//
// A worker built without Python (ATTNPROF_PYTHON_KERNELS off, or no libpython found) skips py:
// cases, saying so.
#ifdef ATTNPROF_HAVE_PYTHON
// Python.h first, as the C API asks.
#include <Python.h>
#include <torch/csrc/autograd/python_variable.h>
#endif

#include <ATen/record_function.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>

#include "harness/core/json.h"
#include "harness/kernel/package.h"
#include "harness/kernel/python.h"
#include "worker/kernel/variants/variants.h"
#ifdef ATTNPROF_HAVE_PYTHON
#include "worker/kernel/variants/python_runtime_source.h"
#endif

namespace attnprof::kernel {
namespace {

#ifdef ATTNPROF_HAVE_PYTHON

// The GIL for a scope, from whichever thread the runner calls on.
class Gil {
 public:
  Gil() : m_state(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(m_state); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE m_state;
};

// A strong reference, released with the GIL held: every Ref lives in a scope that holds it, but
// for Loaded::fn, which Loaded releases itself (and leaks at exit: see ~Loaded).
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject* o) : m_o(o) {}  // takes a new reference
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& r) noexcept : m_o(r.m_o) { r.m_o = nullptr; }
  Ref& operator=(Ref&& r) noexcept {
    std::swap(m_o, r.m_o);
    return *this;
  }
  ~Ref() { Py_XDECREF(m_o); }
  PyObject* get() const { return m_o; }
  // Lets go without a decref: for a reference still held when the process exits.
  void leak() { m_o = nullptr; }
  explicit operator bool() const { return m_o != nullptr; }

 private:
  PyObject* m_o = nullptr;
};

// Where a failed call's whole traceback goes: one file per failure, named in the message.
// (POSIX calls, not std::filesystem's: libtorch.so exports its own copies of some of those,
// which the dynamic linker binds first, and its remove_all crashes.)
std::string write_log(const std::string& text) {
  static int n = 0;
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = fmt::format("{}/attnprof-python", tmp && *tmp ? tmp : "/tmp");
  mkdir(dir.c_str(), 0777);
  const std::string file = fmt::format("{}/{}-{}.log", dir, getpid(), ++n);
  std::ofstream out(file);
  out << text;
  return out ? file : std::string();
}

// The interpreter and attnprof's runtime module in it (python_runtime.py), started on the first
// py: case. Not finalized: see Ref.
class Interpreter {
 public:
  static Interpreter& get() {
    static Interpreter i;
    if (!i.m_error.empty()) throw std::runtime_error(i.m_error);
    return i;
  }
  PyObject* runtime() const { return m_runtime; }
  PyObject* builtins() const { return m_builtins; }

  // When the pending Python exception is the built-in kernels' Unsupported (a skip): its text,
  // the exception cleared. Otherwise nullopt, the exception left pending for error().
  std::optional<std::string> unsupported() {
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);  // nothing may run with an exception pending
    Ref cls(m_builtins ? PyObject_GetAttrString(m_builtins, "Unsupported") : nullptr);
    if (!cls || !type || !PyErr_GivenExceptionMatches(type, cls.get())) {
      PyErr_Clear();
      PyErr_Restore(type, value, tb);
      return std::nullopt;
    }
    Ref t(type), v(value), trace(tb);
    Ref text(v ? PyObject_Str(v.get()) : nullptr);
    const char* s = text ? PyUnicode_AsUTF8(text.get()) : nullptr;
    std::string out = s ? s : "unknown reason";
    PyErr_Clear();
    return out;
  }

  // The pending Python exception as one line naming the user's file and line (see
  // python_runtime.describe), with the log file of its whole traceback. Clears it.
  std::string error(const std::string& user_file, const std::string& context) {
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb) PyException_SetTraceback(value, tb);
    Ref t(type), v(value), trace(tb);
    std::string line = "a Python exception that could not be described";
    std::string full;
    if (v) {
      Ref described(PyObject_CallMethod(m_runtime, "describe", "Os", v.get(), user_file.c_str()));
      const char* a = nullptr;
      const char* b = nullptr;
      if (described && PyArg_ParseTuple(described.get(), "ss", &a, &b)) {
        line = a;
        full = b;
      }
      PyErr_Clear();
    }
    const std::string log = full.empty() ? std::string() : write_log(full);
    return fmt::format("{}{}{}", context.empty() ? "" : context + ": ", line,
                       log.empty() ? "" : fmt::format(" (traceback: {})", log));
  }

 private:
  Interpreter() {
    // One compile thread: Inductor then compiles in this process instead of a pool of
    // subprocesses started through sys.executable. The user's setting wins.
    setenv("TORCHINDUCTOR_COMPILE_THREADS", "1", /*overwrite=*/0);
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;  // SIGINT and SIGTERM stay the worker's
    config.parse_argv = 0;
    config.user_site_directory = 0;
    // The venv's python as the executable: the interpreter finds the venv's site-packages
    // (pyvenv.cfg beside it) as that python would, and subprocesses run it.
    PyStatus st = PyConfig_SetBytesString(&config, &config.executable, ATTNPROF_PYTHON_EXECUTABLE);
    if (!PyStatus_Exception(st))
      st = PyConfig_SetBytesString(&config, &config.program_name, ATTNPROF_PYTHON_EXECUTABLE);
    char arg0[] = "attnprof-worker";
    char* argv[] = {arg0};
    if (!PyStatus_Exception(st)) st = PyConfig_SetBytesArgv(&config, 1, argv);
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
      m_error = fmt::format("cannot start Python {}: {}", ATTNPROF_PYTHON_EXECUTABLE,
                            st.err_msg ? st.err_msg : "unknown error");
      return;
    }
    {
      Ref code(Py_CompileString(kPythonRuntimeSource, "<attnprof python_runtime.py>",
                                Py_file_input));
      if (code) m_runtime = PyImport_ExecCodeModule("attnprof_python_runtime", code.get());
    }
    if (m_runtime) {
      Ref code(Py_CompileString(kPythonBuiltinsSource, "<attnprof python_builtins.py>",
                                Py_file_input));
      if (code) m_builtins = PyImport_ExecCodeModule("attnprof_python_builtins", code.get());
      if (!m_builtins) m_runtime = nullptr;  // described below, as the runtime's failure
    }
    if (!m_runtime) {
      PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
      PyErr_Fetch(&type, &value, &tb);
      Ref t(type), v(value), trace(tb);
      Ref text(v ? PyObject_Str(v.get()) : nullptr);
      const char* s = text ? PyUnicode_AsUTF8(text.get()) : nullptr;
      m_error = fmt::format("Python {}: cannot import torch in the embedded interpreter: {}",
                            ATTNPROF_PYTHON_EXECUTABLE, s ? s : "unknown error");
      PyErr_Clear();
    }
    // The runner calls from its own threads: every call takes the GIL (class Gil).
    PyEval_SaveThread();
  }

  PyObject* m_runtime = nullptr;
  PyObject* m_builtins = nullptr;
  std::string m_error;
};

const char* level_inputs(core::Level l) {
  return l == core::Level::kernel ? "[B, Hq, Sq, D]" : "[B, Sq, hidden]";
}

// The py: kernel of the case at hand.
struct Loaded {
  std::string kernel;        // the variant's name
  std::string file;          // absolute
  std::string forward_at;    // FILE:LINE of what is called
  std::string scope;         // the cost matrix's interpreter row
  std::string mode;          // "" eager
  std::string torch_version;
  std::string runs;          // flex and hf: what runs ("transformers 5.25.0 sdpa attention")
  bool builtin = false;      // flex or hf:
  bool compiles = false;     // the first call compiles (PythonKernel::compiles)
  Ref fn;
  core::Level level = core::Level::kernel;
  bool first_call = true;
  double compile_ms = 0;
  double graphs0 = 0, breaks0 = 0, frames0 = 0;  // Dynamo's counters before the first call
  std::map<std::string, double> metrics;

  void reset() {
    Gil gil;
    fn = Ref();
  }
  // The variants live in a static registry, destroyed at exit without the GIL, and the
  // interpreter is never finalized (torch's own exit-time teardown would race it): the callable
  // is left to the process's end.
  ~Loaded() { fn.leak(); }
};

// The fresh Inductor cache of the case at hand (python_runtime.compile removes the previous
// one), removed when the worker exits.
void remember_fresh_cache(std::string path) {
  static std::string* current = [] {
    static std::string s;
    std::atexit([] {
      if (s.empty()) return;
      nftw(
          s.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); },
          16, FTW_DEPTH | FTW_PHYS);
    });
    return &s;
  }();
  *current = std::move(path);
}

std::map<std::string, double> counters(Interpreter& py, const Loaded& p) {
  std::map<std::string, double> out;
  Ref c(PyObject_CallMethod(py.runtime(), "compile_counters", nullptr));
  if (!c) throw std::runtime_error(py.error(p.file, p.kernel + ": reading Dynamo's counters"));
  for (const char* key : {"graphs", "graph_breaks", "frames"})
    if (PyObject* v = PyDict_GetItemString(c.get(), key)) out[key] = PyFloat_AsDouble(v);
  return out;
}

// flex or hf:NAME for the case (python_builtins.py): the callable, the figures measured while
// making it (the block mask's build time, the FLOPs it executes) as the case's metrics, and what
// runs. A case the kernel cannot express is skipped with its reason.
void make_builtin(Interpreter& py, Loaded& p, const PythonKernel& k, const core::Case& c) {
  const std::string case_json = core::to_json(c).dump();
  const bool flex = k.source == PythonKernel::Source::flex;
  Ref made(flex ? PyObject_CallMethod(py.builtins(), "make_flex", "si", case_json.c_str(),
                                      k.mode.empty() ? 0 : 1)
                : PyObject_CallMethod(py.builtins(), "make_hf", "ss", k.name.c_str(),
                                      case_json.c_str()));
  if (!made) {
    if (auto why = py.unsupported()) throw Unsupported(fmt::format("{}: {}", c.kernel, *why));
    throw std::runtime_error(py.error("", c.kernel));
  }
  PyObject* fn = PyTuple_GetItem(made.get(), 0);
  PyObject* figures = PyTuple_GetItem(made.get(), 1);
  const char* runs = PyUnicode_AsUTF8(PyTuple_GetItem(made.get(), 2));
  p.runs = runs ? runs : c.kernel;
  p.forward_at = c.kernel;
  p.scope = fmt::format("python: {}", c.kernel);
  PyObject *key = nullptr, *value = nullptr;
  Py_ssize_t pos = 0;
  while (PyDict_Next(figures, &pos, &key, &value))
    if (const char* name = PyUnicode_AsUTF8(key)) p.metrics[name] = PyFloat_AsDouble(value);
  PyErr_Clear();
  Py_INCREF(fn);
  p.fn = Ref(fn);
}

void prepare(Loaded& p, const core::Case& c) {
  std::string why;
  const auto parts = parse_python(c.kernel, &why);
  if (!parts) throw std::runtime_error(fmt::format("kernel \"{}\": {}", c.kernel, why));
  Interpreter& py = Interpreter::get();
  p.reset();
  Gil gil;
  p.kernel = c.kernel;
  p.file = python_file(c.kernel, c.loc.file);
  p.mode = parts->mode;
  p.level = c.level;
  p.first_call = true;
  p.metrics.clear();
  p.builtin = parts->builtin();
  p.compiles = parts->compiles();
  if (p.builtin) {
    make_builtin(py, p, *parts, c);
  } else {
    p.scope = fmt::format("python: {}:{}", p.file.substr(p.file.rfind('/') + 1), parts->name);
    std::vector<std::string> inputs = package_inputs(c);
    if (!inputs.empty() && inputs.back() == "mask") inputs.pop_back();
    const std::string device = c.hardware.device;
    Ref made(PyObject_CallMethod(py.runtime(), "make", "sssiss", p.file.c_str(),
                                 parts->name.c_str(), c.kernel_args.c_str(),
                                 static_cast<int>(inputs.size()), device.c_str(),
                                 core::to_string(c.dtype)));
    if (!made) throw std::runtime_error(py.error(p.file, ""));
    PyObject* fn = PyTuple_GetItem(made.get(), 0);
    const char* at = PyUnicode_AsUTF8(PyTuple_GetItem(made.get(), 1));
    p.forward_at = at ? at : p.file;
    Py_INCREF(fn);
    p.fn = Ref(fn);
  }
  {
    Ref torch(PyImport_ImportModule("torch"));
    Ref version(torch ? PyObject_GetAttrString(torch.get(), "__version__") : nullptr);
    const char* v = version ? PyUnicode_AsUTF8(version.get()) : nullptr;
    p.torch_version = v ? v : "?";
    PyErr_Clear();
  }
  if (!p.compiles) return;
  if (p.mode.empty()) {
    // transformers' flex_attention compiles FlexAttention itself at its first call: the same
    // fresh start as a mode's, around its own torch.compile.
    Ref cache(PyObject_CallMethod(py.runtime(), "compile_state", "i", c.compile_cache_warm ? 1 : 0));
    if (!cache) throw std::runtime_error(py.error(p.file, "readying its compile"));
    const char* path = PyUnicode_AsUTF8(cache.get());
    remember_fresh_cache(path ? path : "");
  } else {
    Ref compiled(PyObject_CallMethod(py.runtime(), "compile", "Osi", p.fn.get(), p.mode.c_str(),
                                     c.compile_cache_warm ? 1 : 0));
    if (!compiled)
      throw std::runtime_error(py.error(p.file, fmt::format("torch.compile (mode {})", p.mode)));
    PyObject* wrapped = PyTuple_GetItem(compiled.get(), 0);
    const char* cache = PyUnicode_AsUTF8(PyTuple_GetItem(compiled.get(), 1));
    remember_fresh_cache(cache ? cache : "");
    Py_INCREF(wrapped);
    p.fn = Ref(wrapped);
  }
  const auto before = counters(py, p);
  p.graphs0 = before.at("graphs");
  p.breaks0 = before.at("graph_breaks");
  p.frames0 = before.at("frames");
}

// The tensor a call returned (a tuple's first element), checked against what the case expects.
at::Tensor take_output(const Loaded& p, PyObject* r, const at::Tensor& like,
                       const std::vector<int64_t>& shape) {
  PyObject* t = r;
  if ((PyTuple_Check(r) || PyList_Check(r)) && PySequence_Size(r) > 0)
    t = PySequence_Fast_GET_ITEM(r, 0);
  if (!THPVariable_Check(t))
    throw std::runtime_error(fmt::format("{}: returned {}, not a tensor (or a tuple whose first "
                                         "element is the output)",
                                         p.forward_at, Py_TYPE(t)->tp_name));
  at::Tensor out = THPVariable_Unpack(t);
  const std::string level = core::to_string(p.level);
  if (out.sizes() != c10::IntArrayRef(shape))
    throw std::runtime_error(fmt::format("{}: returned shape {}; a {}-level case expects {} = {}",
                                         p.forward_at, fmt::join(out.sizes(), "x"), level,
                                         level_inputs(p.level), fmt::join(shape, "x")));
  if (out.scalar_type() != like.scalar_type())
    throw std::runtime_error(fmt::format("{}: returned dtype {}; this case's inputs are {}",
                                         p.forward_at, c10::toString(out.scalar_type()),
                                         c10::toString(like.scalar_type())));
  if (out.device() != like.device())
    throw std::runtime_error(fmt::format("{}: returned a tensor on {}; this case runs on {}",
                                         p.forward_at, out.device().str(), like.device().str()));
  return out;
}

at::Tensor call(Loaded& p, const std::vector<at::Tensor>& args, std::vector<int64_t> shape) {
  if (!p.fn) throw std::logic_error("py: the module was called before it was prepared");
  Interpreter& py = Interpreter::get();
  const auto start = std::chrono::steady_clock::now();
  at::Tensor out;
  {
    RECORD_USER_SCOPE(p.scope);
    Gil gil;
    PyObject* argv[16];
    const size_t n = std::min<size_t>(args.size(), 16);
    for (size_t i = 0; i < n; ++i) argv[i] = THPVariable_Wrap(args[i]);
    Ref r(PyObject_Vectorcall(p.fn.get(), argv, n, nullptr));
    for (size_t i = 0; i < n; ++i) Py_DECREF(argv[i]);
    if (!r)
      throw std::runtime_error(py.error(
          p.file, !p.compiles || !p.first_call
                      ? (p.builtin ? p.kernel : "")
                      : fmt::format("{}torch.compile (mode {}) at the first call",
                                    p.builtin ? p.kernel + ": " : "",
                                    p.mode.empty() ? "default" : p.mode)));
    out = take_output(p, r.get(), args.front(), shape);
  }
  if (p.first_call && p.compiles) {
    // The first call compiled (and ran once): its time is the compile's, never a sample.
    Gil gil;
    p.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const auto after = counters(py, p);
    p.metrics["compile.time_ms"] = p.compile_ms;
    p.metrics["compile.graphs"] = after.at("graphs") - p.graphs0;
    p.metrics["compile.graph_breaks"] = after.at("graph_breaks") - p.breaks0;
    p.frames0 = after.at("frames");
  }
  p.first_call = false;
  return out;
}

std::map<std::string, double> metrics(Loaded& p) {
  if (!p.compiles || p.first_call) return p.metrics;
  Interpreter& py = Interpreter::get();
  Gil gil;
  std::map<std::string, double> out = p.metrics;
  // Frames Dynamo compiled after the first call: guards that failed on the measured calls.
  out["compile.recompiles"] = counters(py, p).at("frames") - p.frames0;
  return out;
}

#endif  // ATTNPROF_HAVE_PYTHON

}  // namespace

std::string python_kernels_status() {
#ifdef ATTNPROF_HAVE_PYTHON
  return fmt::format("Python {} of {}, embedded", PY_VERSION, ATTNPROF_PYTHON_EXECUTABLE);
#else
  return "off: this attnprof-worker was built without Python (no libpython of the torch's "
         "python was found, or -DATTNPROF_PYTHON_KERNELS=OFF)";
#endif
}

Variant make_python_variant(std::string_view name) {
  Variant v;
  v.name = std::string(name);
  const auto parts = parse_python(name);
  const std::string how =
      !parts || parts->mode.empty() ? " (eager)" : " under torch.compile mode " + parts->mode;
  if (!parts)
    v.description = std::string(name);
  else if (parts->source == PythonKernel::Source::flex)
    v.description = "FlexAttention with the case's mask as a block mask" + how;
  else if (parts->source == PythonKernel::Source::transformers)
    v.description = fmt::format("transformers' {} attention function{}", parts->name, how);
  else
    v.description = fmt::format("Python {} from {}{}", parts->name, parts->file, how);
  // flex computes every modifier; transformers' functions those they take (make_hf skips the
  // rest, naming why); a user's module is called with the convention's tensors, no modifier.
  if (parts && parts->builtin()) v.score_mods = {"alibi", "softcap", "rel_bias", "head_bias"};
#ifdef ATTNPROF_HAVE_PYTHON
  auto loaded = std::make_shared<Loaded>();
  v.unsupported = [](const core::Case&) { return std::optional<std::string>{}; };
  v.prepare = [loaded](const core::Case& c) { prepare(*loaded, c); };
  v.launch = [loaded](const Inputs& in) {
    return call(*loaded, convention_args(in), in.q.sizes().vec());
  };
  // flex and hf: are attention functions: at block and layer level the harness's workload
  // calls them, as it calls sdpa.
  if (!parts || !parts->builtin())
    v.launch_block = [loaded](const BlockInputs& in) {
      return call(*loaded, convention_args(in), in.x.sizes().vec());
    };
  v.chosen_backend = [loaded](const Inputs&) {
    if (loaded->builtin)
      return loaded->mode.empty() ? loaded->runs
                                  : fmt::format("{} under torch.compile mode {}", loaded->runs,
                                                loaded->mode);
    return loaded->mode.empty()
               ? fmt::format("python eager (torch {})", loaded->torch_version)
               : fmt::format("torch.compile mode {} (torch {})", loaded->mode,
                             loaded->torch_version);
  };
  v.metrics = [loaded] { return metrics(*loaded); };
#else
  v.unsupported = [](const core::Case&) {
    return std::optional<std::string>(
        "this attnprof-worker was built without Python (no libpython of the torch's python was "
        "found, or -DATTNPROF_PYTHON_KERNELS=OFF), so it cannot run py: kernels");
  };
  v.launch = [](const Inputs&) -> at::Tensor {
    throw std::logic_error("py: kernels need a worker built with Python");
  };
#endif
  return v;
}

}  // namespace attnprof::kernel
