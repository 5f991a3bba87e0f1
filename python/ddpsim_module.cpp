// ddpsim_module.cpp: the `ddpsim` Python module (pybind11). It exposes the run API
// (simulator/run.hpp) and nothing else, so a notebook gets exactly what the CLI prints:
//
//   import ddpsim
//   doc = ddpsim.predict("scenarios/default.json")               # `ddpsim predict --format json`
//   doc = ddpsim.predict({"name": "x", "model": {...}, ...}, engine="event")
//   plan = ddpsim.plan("scenarios/examples/plan-gpt2-xl.json")    # `ddpsim plan --format json`
//   try: ddpsim.predict({...})
//   except ddpsim.ScenarioError as e: print(e.file, e.pointer, e.expected, e.got)
//
// A scenario is a path or a dict (relative references in a dict resolve against `base_dir`,
// default the working directory). Results are the CLI's JSON documents as Python objects
// (dict / list / float / int / str / bool / None), converted through Python's json module so
// nothing is lost or renamed. Bad input raises ddpsim.ScenarioError (a ValueError carrying the
// file, JSON pointer, what was expected and what was found); what this build cannot do raises
// ddpsim.UnsupportedError; any other ddpsim error raises ddpsim.Error. The GIL is released while
// a run computes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "simulator/planner.hpp"
#include "simulator/run.hpp"

namespace py = pybind11;

namespace {

// The exception classes, created once at import (module_::def_submodule-free: plain attributes).
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

// A path (str or os.PathLike) or a dict; a dict's relative references resolve from `base_dir`.
ddpsim::model::Scenario load(const py::object& scenario, const std::optional<std::string>& base) {
  if (py::isinstance<py::dict>(scenario)) {
    const std::filesystem::path dir =
        base ? std::filesystem::path(*base) : std::filesystem::current_path();
    // The file name shown in errors; parse_scenario resolves references from its folder.
    const std::string file = (dir / "<dict>").string();
    const nlohmann::json doc = to_json(scenario);
    py::gil_scoped_release unlocked;
    return ddpsim::model::parse_scenario(doc, file);
  }
  const std::string path = py::str(py::module_::import("os").attr("fspath")(scenario));
  py::gil_scoped_release unlocked;
  return ddpsim::model::load_scenario(path);
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

// Raises `type` with `message` and the InputError's parts as attributes.
void raise_input_error(const ddpsim::InputError& e) {
  py::object exc = py::reinterpret_borrow<py::object>(g_scenario_error)(e.what());
  exc.attr("file") = e.file();
  exc.attr("pointer") = e.pointer();
  exc.attr("expected") = e.expected();
  exc.attr("got") = e.got();
  PyErr_SetObject(g_scenario_error, exc.ptr());
}

}  // namespace

PYBIND11_MODULE(ddpsim, m) {
  m.doc() =
      "ddpsim: predict data-parallel training step time, memory and scaling (the run API of "
      "the ddpsim CLI; see README.md, 'Python API')";
  m.attr("__version__") = DDPSIM_VERSION;
  g_error = PyErr_NewExceptionWithDoc("ddpsim.Error", "Any ddpsim error (one line).",
                                      PyExc_RuntimeError, nullptr);
  g_scenario_error = PyErr_NewExceptionWithDoc(
      "ddpsim.ScenarioError",
      "Bad input: .file, .pointer (JSON pointer), .expected and .got say where and what.",
      PyExc_ValueError, nullptr);
  g_unsupported_error = PyErr_NewExceptionWithDoc(
      "ddpsim.UnsupportedError", "A valid request this build or version cannot do.", g_error,
      nullptr);
  m.attr("Error") = py::reinterpret_borrow<py::object>(g_error);
  m.attr("ScenarioError") = py::reinterpret_borrow<py::object>(g_scenario_error);
  m.attr("UnsupportedError") = py::reinterpret_borrow<py::object>(g_unsupported_error);
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
        "Predict every sweep point of a scenario (a path or a dict): the document `ddpsim "
        "predict --format json` prints, as Python objects. engine: None (the scenario's "
        "simulation.engine), \"analytic\" or \"event\".");
  m.def("plan", &plan, py::arg("scenario"), py::arg("base_dir") = py::none(),
        "The planner's answer for a scenario (a path or a dict): the document `ddpsim plan "
        "--format json` prints, as Python objects.");
}
