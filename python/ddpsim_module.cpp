// ddpsim_module.cpp: ddpsim._core, the compiled core of the `ddpsim` Python package (pybind11).
// It exposes the run API (simulator/run.hpp), the collective table
// (simulator/collectives/collective_table.hpp) and the importers
// (simulator/import_scenario.hpp, model/imports/hf_auto.hpp) and nothing else, so a notebook
// gets exactly what the CLI computes. The package's pure-Python layer (python/ddpsim/) is the
// public API: it accepts os.PathLike paths, turns these documents into typed results and defines
// the exceptions this module raises (ddpsim/errors.py):
//
//   _core.predict(scenario, engine, base_dir) -> dict    `ddpsim predict --format json`
//   _core.plan(scenario, base_dir) -> dict               `ddpsim plan --format json`
//   _core.collective(hardware, gpus, ...) -> dict         `ddpsim collective`'s rows
//   _core.import_scenario(kind, path, base, base_path, gpus) -> (dict, [warning])
//   _core.import_trace(traces, base, base_path) -> dict   `ddpsim import trace`
//   _core.fill_hf_auto(config, file, base, base_path, world_size) -> (dict, [note])
//                                        (config None: the file at `file`)
//   _core.data_dir() -> str; _core.set_packaged_data_dir(path)   the presets (model/paths.hpp)
//
// A scenario is a path (str) or a dict (relative references in a dict resolve against
// `base_dir`, default the working directory); a base scenario is a dict, or None with
// `base_path` naming the file to read. Documents cross the boundary through Python's json
// module, so nothing is lost or renamed. Bad input raises ddpsim.ScenarioError (file, JSON
// pointer, what was expected and what was found); what this build cannot do raises
// ddpsim.UnsupportedError; any other ddpsim error raises ddpsim.Error. The GIL is released while
// a run computes: predict() and plan() run on a thread of their own while the calling thread
// lets Python run its signal handlers every 20 ms, so Ctrl-C (or any exception a Python signal
// handler raises) is raised within a fraction of a second; the run is told to stop
// (RunOptions::cancelled, asked between sweep points) and is joined at exit. The result becomes
// Python objects directly (no JSON text), Ctrl-C taken there too. No process-wide signal
// handler is installed here.
// A path is a str (a bytes path is decoded as os.fsdecode does, an os.PathLike by os.fspath); a
// NUL character in it raises ScenarioError naming the path with the NUL escaped (\x00), since
// the C library would silently read the path only up to it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/error.hpp"
#include "model/imports/hf_auto.hpp"
#include "model/json_file.hpp"
#include "model/paths.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/collectives/collective_table.hpp"
#include "simulator/import_scenario.hpp"
#include "simulator/planner.hpp"
#include "simulator/run.hpp"

namespace py = pybind11;

namespace {

// A path with a NUL is refused: ScenarioError (an InputError) naming it, the NUL escaped.
void checked_path(const std::string& path) {
  const std::size_t nul = path.find('\0');
  if (nul == std::string::npos) return;
  throw ddpsim::InputError(ddpsim::printable(path), "", "a path without a NUL character",
                           "a NUL at character " + std::to_string(nul));
}

// The exception classes of ddpsim/errors.py, looked up once at import.
PyObject* g_error = nullptr;
PyObject* g_scenario_error = nullptr;
PyObject* g_unsupported_error = nullptr;

// Python object -> nlohmann::json through Python's own json.dumps, so every JSON type Python
// can write is accepted and anything else (a set, a float NaN) fails there with Python's error.
nlohmann::json to_json(const py::handle& obj) {
  const std::string text = py::module_::import("json")
                               .attr("dumps")(obj, py::arg("allow_nan") = false)
                               .cast<std::string>();
  return nlohmann::json::parse(text);
}

py::object from_json(const nlohmann::json& doc) {
  return py::module_::import("json").attr("loads")(doc.dump());
}

// The name a document given as a dict has in errors: "<base_dir>/<dict>", so that relative
// references resolve from base_dir (default: the working directory).
std::string dict_file(const std::optional<std::string>& base_dir) {
  const std::filesystem::path dir =
      base_dir ? std::filesystem::path(*base_dir) : std::filesystem::current_path();
  return (dir / "<dict>").string();
}

// A path as the file system reads it: the bytes os.fsencode gives for a str, bytes or
// os.PathLike (a str's undecodable bytes survive), refused when it holds a NUL (the C library
// would read "x.json\0junk" as x.json).
std::string path_arg(const py::handle& value) {
  const std::string path = py::module_::import("os").attr("fsencode")(value).cast<std::string>();
  checked_path(path);
  return path;
}

// A scenario argument as the run reads it: a path (str, bytes, os.PathLike), or a dict's
// document with the name it has in errors. Converted with the GIL; loaded without it.
struct ScenarioSource {
  std::optional<nlohmann::json> doc;  // a dict
  std::string file;                   // the dict's name, or the path
  ddpsim::model::Scenario load() const {
    return doc ? ddpsim::model::parse_scenario(*doc, file) : ddpsim::model::load_scenario(file);
  }
};

ScenarioSource source(const py::object& scenario, const std::optional<std::string>& base) {
  if (py::isinstance<py::dict>(scenario)) return {to_json(scenario), dict_file(base)};
  return {std::nullopt, path_arg(scenario)};
}

// Runs `work` on a thread of its own while this thread, taking the GIL every 20 ms, lets Python
// run its signal handlers (PyErr_CheckSignals): when one raises (Ctrl-C's KeyboardInterrupt),
// the exception is raised here at once, `cancel` tells the work to stop (a run asks between
// sweep points: RunOptions::cancelled) and the thread is joined at exit. The work's own
// exception is raised here as if it had run on this thread.
struct Work {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::exception_ptr error;
  std::atomic<bool> cancel{false};
};
std::mutex g_abandoned_mutex;
std::vector<std::thread> g_abandoned;  // interrupted work still finishing; joined at exit

void join_abandoned() {
  std::vector<std::thread> threads;
  {
    const std::lock_guard<std::mutex> lock(g_abandoned_mutex);
    threads.swap(g_abandoned);
  }
  for (std::thread& t : threads) t.join();
}

template <class T, class F>
T run_interruptibly(F work) {
  auto state = std::make_shared<Work>();
  auto result = std::make_shared<std::optional<T>>();
  std::thread thread([state, result, work]() mutable {
    try {
      *result = work(state->cancel);
    } catch (...) {
      state->error = std::current_exception();
    }
    const std::lock_guard<std::mutex> lock(state->mutex);
    state->done = true;
    state->finished.notify_all();
  });
  for (;;) {
    bool done = false;
    {
      py::gil_scoped_release unlocked;
      std::unique_lock<std::mutex> lock(state->mutex);
      done = state->finished.wait_for(lock, std::chrono::milliseconds(20),
                                      [&] { return state->done; });
    }
    if (done) break;
    if (PyErr_CheckSignals() != 0) {
      state->cancel = true;
      const std::lock_guard<std::mutex> lock(g_abandoned_mutex);
      g_abandoned.push_back(std::move(thread));
      throw py::error_already_set();
    }
  }
  {
    py::gil_scoped_release unlocked;
    thread.join();
  }
  if (state->error) std::rethrow_exception(state->error);
  return std::move(**result);
}

// nlohmann::json -> Python objects (what json.loads(doc.dump()) gives: the same keys in the same
// order, the same numbers), taking Ctrl-C every 4096 values: a 10,000-point result holds
// millions of them (json.loads of its 400 MB text took 8 s with signals held off).
class ToPython {
 public:
  py::object operator()(const nlohmann::json& v) {
    return py::reinterpret_steal<py::object>(make(v));
  }

 private:
  // A new reference (the C API directly: a 10,000-point result has millions of values).
  PyObject* make(const nlohmann::json& v) {
    if (++count_ % 4096 == 0 && PyErr_CheckSignals() != 0) throw py::error_already_set();
    PyObject* o = nullptr;
    switch (v.type()) {
      case nlohmann::json::value_t::object: {
        // Owned until complete: a Ctrl-C part way (an exception) releases what was built.
        py::object d = py::reinterpret_steal<py::object>(PyDict_New());
        if (!d) throw py::error_already_set();
        for (auto it = v.begin(); it != v.end(); ++it) {
          const py::object value = py::reinterpret_steal<py::object>(make(it.value()));
          if (PyDict_SetItem(d.ptr(), key(it.key()), value.ptr()) != 0) {
            throw py::error_already_set();
          }
        }
        return d.release().ptr();
      }
      case nlohmann::json::value_t::array: {
        py::object l =
            py::reinterpret_steal<py::object>(PyList_New(static_cast<Py_ssize_t>(v.size())));
        if (!l) throw py::error_already_set();
        for (std::size_t i = 0; i < v.size(); ++i) {
          PyList_SET_ITEM(l.ptr(), static_cast<Py_ssize_t>(i), make(v[i]));  // steals it
        }
        return l.release().ptr();
      }
      case nlohmann::json::value_t::string: {
        const std::string& t = v.get_ref<const std::string&>();
        o = PyUnicode_DecodeUTF8(t.data(), static_cast<Py_ssize_t>(t.size()), "strict");
        break;
      }
      case nlohmann::json::value_t::boolean:
        o = PyBool_FromLong(v.get<bool>() ? 1 : 0);
        break;
      case nlohmann::json::value_t::number_integer:
        o = PyLong_FromLongLong(v.get<std::int64_t>());
        break;
      case nlohmann::json::value_t::number_unsigned:
        o = PyLong_FromUnsignedLongLong(v.get<std::uint64_t>());
        break;
      case nlohmann::json::value_t::number_float:
        o = PyFloat_FromDouble(v.get<double>());
        break;
      default:
        Py_INCREF(Py_None);
        o = Py_None;
    }
    if (o == nullptr) throw py::error_already_set();
    return o;
  }
  // Keys repeat in every point (as json.loads memoises them): one str per distinct key.
  PyObject* key(const std::string& k) {
    auto it = keys_.find(k);
    if (it == keys_.end()) it = keys_.emplace(k, py::str(k)).first;
    return it->second.ptr();
  }
  std::size_t count_ = 0;
  std::unordered_map<std::string, py::object> keys_;
};

// A base scenario: a dict (named `base_path` in errors), or the file at `base_path`, or none.
std::optional<nlohmann::json> base_document(const py::object& base, const std::string& base_path) {
  if (!base.is_none()) return to_json(base);
  if (base_path.empty()) return std::nullopt;
  checked_path(base_path);
  py::gil_scoped_release unlocked;
  return ddpsim::model::read_json_file(base_path);
}

std::optional<ddpsim::model::Engine> engine_from(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  if (*name == "analytic") return ddpsim::model::Engine::kAnalytic;
  if (*name == "event") return ddpsim::model::Engine::kEvent;
  throw py::value_error("engine must be \"analytic\" or \"event\", got \"" + *name + "\"");
}

py::object predict(const py::object& scenario, const std::optional<std::string>& engine,
                   const std::optional<std::string>& base_dir) {
  ddpsim::sim::RunOptions o;
  o.engine = engine_from(engine);
  if (base_dir) checked_path(*base_dir);
  const ScenarioSource src = source(scenario, base_dir);
  const nlohmann::json doc =
      run_interruptibly<nlohmann::json>([src, o](const std::atomic<bool>& cancel) mutable {
        o.cancelled = [&cancel] { return cancel.load(); };
        const ddpsim::model::Scenario s = src.load();
        return ddpsim::sim::run_json(s, ddpsim::sim::predict(s, o));
      });
  return ToPython()(doc);
}

// The planner has no cancellation point: on Ctrl-C the KeyboardInterrupt is raised at once and
// the plan finishes in the background (joined at exit).
py::object plan(const py::object& scenario, const std::optional<std::string>& base_dir) {
  if (base_dir) checked_path(*base_dir);
  const ScenarioSource src = source(scenario, base_dir);
  const nlohmann::json doc = run_interruptibly<nlohmann::json>([src](const std::atomic<bool>&) {
    const ddpsim::model::Scenario s = src.load();
    return ddpsim::sim::plan_json(s, ddpsim::sim::plan(s));
  });
  return ToPython()(doc);
}

py::object collective(const py::object& hardware, int gpus, const std::string& op, double min_bytes,
                      double max_bytes, const std::string& algorithm, const std::string& protocol,
                      const std::string& launch, const std::string& nccl_version,
                      std::optional<int> gpus_per_process, bool cuda_graphs,
                      const std::optional<std::string>& base_dir) {
  ddpsim::sim::CollectiveTableRequest q;
  q.hardware = to_json(hardware);
  q.gpus = gpus;
  q.op = op;
  q.min_bytes = min_bytes;
  q.max_bytes = max_bytes;
  q.algorithm = algorithm;
  q.protocol = protocol;
  q.launch = launch;
  q.nccl_version = nccl_version;
  q.gpus_per_process = gpus_per_process;
  q.cuda_graphs = cuda_graphs;
  const std::filesystem::path dir =
      base_dir ? std::filesystem::path(*base_dir) : std::filesystem::current_path();
  q.source = (dir / "<collective>").string();
  nlohmann::json doc;
  {
    py::gil_scoped_release unlocked;
    doc = ddpsim::sim::collective_table_json(ddpsim::sim::collective_table(q));
  }
  return from_json(doc);
}

py::tuple import_scenario(const std::string& kind, const std::string& path, const py::object& base,
                          const std::string& base_path, std::optional<int> gpus) {
  ddpsim::sim::ImportKind k = ddpsim::sim::ImportKind::kTorch;
  if (kind == "deepspeed") {
    k = ddpsim::sim::ImportKind::kDeepSpeed;
  } else if (kind == "torchtitan") {
    k = ddpsim::sim::ImportKind::kTorchtitan;
  } else if (kind != "torch") {
    throw py::value_error("kind must be \"deepspeed\", \"torchtitan\" or \"torch\", got \"" + kind +
                          "\"");
  }
  checked_path(path);
  const std::optional<nlohmann::json> base_doc = base_document(base, base_path);
  ddpsim::sim::ImportedScenario r;
  {
    py::gil_scoped_release unlocked;
    r = ddpsim::sim::import_scenario(k, path, base_doc ? &*base_doc : nullptr, base_path, gpus);
  }
  return py::make_tuple(from_json(r.scenario), py::cast(r.warnings));
}

py::object import_trace(const std::vector<std::string>& traces, const py::object& base,
                        const std::string& base_path) {
  for (const std::string& t : traces) checked_path(t);
  const std::optional<nlohmann::json> base_doc = base_document(base, base_path);
  ddpsim::sim::DraftedScenario d;
  {
    py::gil_scoped_release unlocked;
    d = ddpsim::sim::import_trace(traces, base_doc ? &*base_doc : nullptr, base_path);
  }
  return from_json({{"scenario", d.scenario}, {"unknown", d.unknown}, {"summary", d.summary}});
}

py::tuple fill_hf_auto(const py::object& config, const std::string& file, const py::object& base,
                       const std::string& base_path, std::optional<std::int64_t> world_size) {
  const std::optional<nlohmann::json> base_doc = base_document(base, base_path);
  nlohmann::json doc;
  if (config.is_none()) {
    checked_path(file);
    py::gil_scoped_release unlocked;
    doc = ddpsim::model::read_json_file(file);
  } else {
    doc = to_json(config);
  }
  // The world size: given, else the base's cluster.gpus (as `ddpsim import deepspeed`).
  if (!world_size && base_doc && base_doc->is_object() && base_doc->contains("cluster") &&
      base_doc->at("cluster").is_object() && base_doc->at("cluster").contains("gpus") &&
      base_doc->at("cluster").at("gpus").is_number_integer()) {
    world_size = base_doc->at("cluster").at("gpus").get<std::int64_t>();
  }
  std::vector<std::string> notes;
  nlohmann::json filled;
  {
    py::gil_scoped_release unlocked;
    filled = ddpsim::model::fill_hf_auto(doc, file, base_doc ? &*base_doc : nullptr, base_path,
                                         world_size, &notes);
  }
  return py::make_tuple(from_json(filled), py::cast(notes));
}

// Raises ScenarioError with the InputError's message and parts.
// A message or a file name as str: bytes that are not UTF-8 (a Latin-1 file name) as \xNN.
py::str text(const std::string& s) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace"));
}

void raise_input_error(const ddpsim::InputError& e) {
  py::object exc = py::reinterpret_borrow<py::object>(g_scenario_error)(
      text(e.what()), py::arg("file") = text(e.file()), py::arg("pointer") = text(e.pointer()),
      py::arg("expected") = text(e.expected()), py::arg("got") = text(e.got()));
  PyErr_SetObject(g_scenario_error, exc.ptr());
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "ddpsim._core: the compiled run API of the ddpsim package (use `import ddpsim`; see "
      "README.md, 'Python API')";
  m.attr("__version__") = DDPSIM_VERSION;
  // The classes live in Python (ddpsim/errors.py) so that they can be documented, pickled and
  // subclassed like any other; kept alive for the process by the references taken here.
  const py::module_ errors = py::module_::import("ddpsim.errors");
  g_error = py::object(errors.attr("Error")).release().ptr();
  g_scenario_error = py::object(errors.attr("ScenarioError")).release().ptr();
  g_unsupported_error = py::object(errors.attr("UnsupportedError")).release().ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ddpsim::InputError& e) {
      raise_input_error(e);
    } catch (const ddpsim::UnsupportedError& e) {
      PyErr_SetObject(g_unsupported_error, text(e.what()).ptr());
    } catch (const ddpsim::Error& e) {
      PyErr_SetObject(g_error, text(e.what()).ptr());
    }
  });

  // Interrupted runs still finishing in the background end before the interpreter does.
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    py::gil_scoped_release unlocked;
    join_abandoned();
  }));

  m.def("predict", &predict, py::arg("scenario"), py::arg("engine") = py::none(),
        py::arg("base_dir") = py::none(),
        "The document `ddpsim predict --format json` prints for a scenario (a path or a dict).");
  m.def("plan", &plan, py::arg("scenario"), py::arg("base_dir") = py::none(),
        "The document `ddpsim plan --format json` prints for a scenario (a path or a dict).");
  m.def("collective", &collective, py::arg("hardware"), py::arg("gpus"), py::arg("op"),
        py::arg("min_bytes"), py::arg("max_bytes"), py::arg("algorithm"), py::arg("protocol"),
        py::arg("launch"), py::arg("nccl_version"), py::arg("gpus_per_process"),
        py::arg("cuda_graphs"), py::arg("base_dir") = py::none(),
        "`ddpsim collective`'s table as a document (hardware: a hardware section).");
  m.def("import_scenario", &import_scenario, py::arg("kind"), py::arg("path"), py::arg("base"),
        py::arg("base_path"), py::arg("gpus"),
        "`ddpsim import deepspeed|torchtitan|torch`: (scenario, warnings).");
  m.def("import_trace", &import_trace, py::arg("traces"), py::arg("base"), py::arg("base_path"),
        "`ddpsim import trace`: {scenario, unknown, summary}.");
  m.def("fill_hf_auto", &fill_hf_auto, py::arg("config"), py::arg("file"), py::arg("base"),
        py::arg("base_path"), py::arg("world_size"),
        "A DeepSpeed config's \"auto\" values filled as the Hugging Face Trainer fills them: "
        "(config, notes).");
  m.def(
      "data_dir", [] { return ddpsim::model::data_dir().string(); },
      "The folder the presets (models/, hardware/) are read from.");
  m.def(
      "set_packaged_data_dir",
      [](const std::string& dir) { ddpsim::model::set_packaged_data_dir(dir); }, py::arg("dir"),
      "Presets shipped with the package, used unless $DDPSIM_DATA_DIR is set (model/paths.hpp).");
}
