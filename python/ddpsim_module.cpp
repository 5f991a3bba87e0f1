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
// a run computes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
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

// A path (str) or a dict.
ddpsim::model::Scenario load(const py::object& scenario, const std::optional<std::string>& base) {
  if (py::isinstance<py::dict>(scenario)) {
    const std::string file = dict_file(base);
    const nlohmann::json doc = to_json(scenario);
    py::gil_scoped_release unlocked;
    return ddpsim::model::parse_scenario(doc, file);
  }
  const std::string path = scenario.cast<std::string>();
  py::gil_scoped_release unlocked;
  return ddpsim::model::load_scenario(path);
}

// A base scenario: a dict (named `base_path` in errors), or the file at `base_path`, or none.
std::optional<nlohmann::json> base_document(const py::object& base, const std::string& base_path) {
  if (!base.is_none()) return to_json(base);
  if (base_path.empty()) return std::nullopt;
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
  const ddpsim::model::Scenario s = load(scenario, base_dir);
  nlohmann::json doc;
  {
    py::gil_scoped_release unlocked;
    const ddpsim::sim::Run r = ddpsim::sim::predict(s, o);
    doc = ddpsim::sim::run_json(s, r);
  }
  return from_json(doc);
}

py::object plan(const py::object& scenario, const std::optional<std::string>& base_dir) {
  const ddpsim::model::Scenario s = load(scenario, base_dir);
  nlohmann::json doc;
  {
    py::gil_scoped_release unlocked;
    const ddpsim::sim::PlanResult r = ddpsim::sim::plan(s);
    doc = ddpsim::sim::plan_json(s, r);
  }
  return from_json(doc);
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
void raise_input_error(const ddpsim::InputError& e) {
  py::object exc = py::reinterpret_borrow<py::object>(g_scenario_error)(
      e.what(), py::arg("file") = e.file(), py::arg("pointer") = e.pointer(),
      py::arg("expected") = e.expected(), py::arg("got") = e.got());
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
      PyErr_SetString(g_unsupported_error, e.what());
    } catch (const ddpsim::Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });

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
