# cmake -DBUILD_DIR=... -DWORK=... -P check_install.cmake (arguments: tests/install/CMakeLists.txt)
#
#  1. `cmake --install BUILD_DIR --prefix WORK/prefix` into a fresh prefix;
#  2. the layout: both libraries, the CMake package, headers under include/ddpsim, every program
#     of the build (PROGRAMS) in bin/, scenarios/ as share/ddpsim;
#  3. the headers include only installed headers and none is under detail/, and the exported
#     targets carry no warning, sanitizer or source-tree setting, but do carry C++20 and the
#     nlohmann JSON switches;
#  4. the installed copy of one model preset is broken (share/ddpsim/models/vgg16.json, wrong
#     expected_params): a program that reads the installed presets rejects a scenario naming it
#     with an error naming that file, one that reads the source tree's does not (the prefix lies
#     inside the build tree, so a scenarios/ folder above the binary would be found otherwise);
#  5. the consumer project (CONSUMER) configured with find_package(ddpsim) from the prefix only,
#     built and installed into the prefix's bin/;
#  6. the consumer and the installed `ddpsim predict` reject the broken preset (4), then predict
#     a probe scenario: the consumer's step time must be the CLI's step_time_s, and positive;
#     `ddpsim predict` of the installed default.json works;
#  7. `ddpsim <verb> --help` dispatches to the installed ddpsim-<verb> (calibrate, exec,
#     validate: those that need no display);
#  8. the Python packages calibrate.torch and ddpsim_torch are in share/ddpsim/python and import
#     from there (the modules that need no torch), and the installed ddpsim-validate --runner
#     torch runs that copy, not the source tree's: a line the installed copy alone raises on
#     import is what it reports.
# Everything runs without $DDPSIM_DATA_DIR and from WORK, not from the source tree.
cmake_minimum_required(VERSION 3.25)

foreach(var BUILD_DIR SOURCE_DIR WORK CONSUMER CONFIG GENERATOR CXX_COMPILER PROGRAMS LIBDIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_install.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
unset(ENV{DDPSIM_DATA_DIR})

# Runs a command from WORK; stops with its output when it fails. Sets <name>_out to stdout.
function(run name)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "${name} failed (${rc}): ${cmd}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  set(${name}_out "${out}" PARENT_SCOPE)
endfunction()

function(expect_exists)
  foreach(path IN LISTS ARGN)
    if(NOT EXISTS ${prefix}/${path})
      message(FATAL_ERROR "not installed: <prefix>/${path}")
    endif()
  endforeach()
endfunction()

# 1. Install.
run(install ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --config ${CONFIG})

# 2. Layout (GNUInstallDirs as configured: lib, lib64 or lib/<multiarch> under /usr).
set(libdir ${LIBDIR})
expect_exists(${libdir}/libddpsim_model.a ${libdir}/libddpsim_simulator.a
              ${libdir}/cmake/ddpsim/ddpsimConfig.cmake
              ${libdir}/cmake/ddpsim/ddpsimConfigVersion.cmake
              ${libdir}/cmake/ddpsim/ddpsimTargets.cmake
              include/ddpsim/model/scenario/scenario.hpp include/ddpsim/simulator/run.hpp
              share/ddpsim/default.json share/ddpsim/models/gpt2-xl.json
              share/ddpsim/hardware/dgx-h100.json
              share/ddpsim/data/published-measurements.json)
foreach(program IN LISTS PROGRAMS)
  expect_exists(bin/${program})
endforeach()

# 3. Headers and the exported interface.
file(GLOB_RECURSE headers RELATIVE ${prefix}/include/ddpsim ${prefix}/include/ddpsim/*)
foreach(header IN LISTS headers)
  if(NOT header MATCHES "\\.hpp$")
    message(FATAL_ERROR "not a header under include/ddpsim: ${header}")
  endif()
  if(header MATCHES "(^|/)detail/")
    message(FATAL_ERROR "an internal header is installed: include/ddpsim/${header}")
  endif()
  file(STRINGS ${prefix}/include/ddpsim/${header} includes REGEX "^#include \"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
    if(NOT EXISTS ${prefix}/include/ddpsim/${included})
      message(FATAL_ERROR "include/ddpsim/${header} includes \"${included}\", which is not "
                          "installed (DDPSIM_PUBLIC_HEADERS in cmake/DdpsimInstall.cmake)")
    endif()
  endforeach()
endforeach()
file(GLOB target_files ${prefix}/${libdir}/cmake/ddpsim/ddpsimTargets*.cmake)
foreach(file IN LISTS target_files)
  file(READ ${file} text)
  string(APPEND exported "${text}")
endforeach()
foreach(leak "-W" "-fsanitize" "ddpsim_options" "DDPSIM_VERSION" "${SOURCE_DIR}/")
  string(FIND "${exported}" "${leak}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the exported targets carry '${leak}', a build setting of ddpsim's own")
  endif()
endforeach()
foreach(needed "ddpsim::model" "ddpsim::simulator" "cxx_std_20" "JSON_DIAGNOSTICS=1"
               "JSON_USE_IMPLICIT_CONVERSIONS=0" "include/ddpsim")
  string(FIND "${exported}" "${needed}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the exported targets lack '${needed}'")
  endif()
endforeach()

# 4. The probe scenario (shipped presets), and a second one naming a preset that only the
# installed copy breaks.
set(scenario ${WORK}/probe.json)
file(WRITE ${scenario} [[{
  "name": "install probe",
  "model": {"preset": "resnet50"},
  "hardware": {"preset": "dgx-a100"},
  "cluster": {"gpus": 16},
  "training": {"per_gpu_batch": 32}
}
]])
set(broken_preset ${prefix}/share/ddpsim/models/vgg16.json)
file(READ ${broken_preset} text)
string(JSON text SET "${text}" expected_params 1)
file(WRITE ${broken_preset} "${text}")
file(REAL_PATH ${broken_preset} broken_preset)  # as data_dir() names it: from /proc/self/exe
set(broken_scenario ${WORK}/broken.json)
file(WRITE ${broken_scenario} [[{
  "name": "installed preset",
  "model": {"preset": "vgg16"},
  "hardware": {"preset": "dgx-a100"},
  "cluster": {"gpus": 16},
  "training": {"per_gpu_batch": 32}
}
]])

# Runs a command that must fail naming the installed, broken preset.
function(expect_installed_preset name)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(FIND "${err}" "${broken_preset}" at)
  if(rc EQUAL 0 OR at EQUAL -1)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "${name} did not read the presets of the prefix: ${cmd} exited ${rc}, "
                        "expected an error naming ${broken_preset}\n--- stderr\n${err}")
  endif()
endfunction()

# 5. The consumer: find_package(ddpsim) from the prefix, same generator, compiler and flags.
set(consumer_build ${WORK}/consumer-build)
set(configure_args -S ${CONSUMER} -B ${consumer_build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=${CONFIG} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_INSTALL_PREFIX=${prefix}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
if(CONFIG)
  string(TOUPPER "${CONFIG}" config_upper)
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS_${config_upper}=${CXX_FLAGS_CONFIG}")
endif()
if(MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(LAUNCHER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
run(configure ${CMAKE_COMMAND} ${configure_args})
file(STRINGS ${consumer_build}/CMakeCache.txt found_dir REGEX "^ddpsim_DIR:")
if(NOT found_dir STREQUAL "ddpsim_DIR:PATH=${prefix}/${libdir}/cmake/ddpsim")
  message(FATAL_ERROR "the consumer found another ddpsim package: ${found_dir}")
endif()
run(build ${CMAKE_COMMAND} --build ${consumer_build} --config ${CONFIG})
run(install_consumer ${CMAKE_COMMAND} --install ${consumer_build} --config ${CONFIG})

# 6. The consumer and the installed CLI on the probe scenario; the CLI on the shipped default.
expect_installed_preset(consumer ${prefix}/bin/consumer ${broken_scenario})
expect_installed_preset(ddpsim ${prefix}/bin/ddpsim predict ${broken_scenario})
run(consumer ${prefix}/bin/consumer ${scenario})
if(NOT consumer_out MATCHES "^step_time_s ([^\n]+)\n$")
  message(FATAL_ERROR "consumer printed '${consumer_out}', expected 'step_time_s <seconds>'")
endif()
set(consumer_step "${CMAKE_MATCH_1}")
run(predict ${prefix}/bin/ddpsim predict ${scenario} --format json)
string(JSON cli_step GET "${predict_out}" results 0 step_time_s)
# Numerically equal (if() compares numbers as doubles): string(JSON) re-prints the number.
if(NOT consumer_step EQUAL cli_step)
  message(FATAL_ERROR "step time: consumer ${consumer_step} s, ddpsim predict ${cli_step} s")
endif()
if(NOT cli_step GREATER 0)
  message(FATAL_ERROR "step time ${cli_step} s is not positive")
endif()
run(predict_default ${prefix}/bin/ddpsim predict ${prefix}/share/ddpsim/default.json --format json)
string(JSON points LENGTH "${predict_default_out}" results)
if(points LESS 1)
  message(FATAL_ERROR "ddpsim predict share/ddpsim/default.json gave no results")
endif()

# 6b. An installed share/ddpsim that lost its hardware/ folder is an error naming it (issue 42: the
#     installed ddpsim used to fall back quietly to the source tree it was built from).
file(RENAME ${prefix}/share/ddpsim/hardware ${prefix}/share/ddpsim/hardware.moved)
execute_process(COMMAND ${prefix}/bin/ddpsim predict ${scenario} WORKING_DIRECTORY ${WORK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(RENAME ${prefix}/share/ddpsim/hardware.moved ${prefix}/share/ddpsim/hardware)
if(NOT rc EQUAL 2 OR NOT err MATCHES "share/ddpsim: the installed ddpsim's preset folder has no hardware/")
  message(FATAL_ERROR "ddpsim predict without share/ddpsim/hardware exited ${rc}, expected 2 and "
                      "an error naming the folder\n--- stderr\n${err}")
endif()

# 7. Git-style dispatch from the installed bin/.
foreach(verb calibrate exec validate)
  if("ddpsim-${verb}" IN_LIST PROGRAMS)
    run(dispatch_${verb} ${prefix}/bin/ddpsim ${verb} --help)
  endif()
endforeach()

# 8. The Python programs from the prefix.
set(pydir ${prefix}/share/ddpsim/python)
expect_exists(share/ddpsim/python/calibrate/torch/__init__.py
              share/ddpsim/python/calibrate/torch/ddp_runner.py
              share/ddpsim/python/calibrate/torch/torch_calibrate.py
              share/ddpsim/python/ddpsim_torch/records.py)
find_program(python3 python3 REQUIRED)
run(python_import ${CMAKE_COMMAND} -E env PYTHONPATH=${pydir} ${python3} -c
    "import calibrate.torch.program, ddpsim_torch.records")
if("ddpsim-validate" IN_LIST PROGRAMS)
  set(marker "ddpsim install probe: the installed calibrate.torch ran")
  file(APPEND ${pydir}/calibrate/torch/__init__.py "raise SystemExit('${marker}')\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=DDPSIM_PYTHONPATH --unset=PYTHONPATH
                          ${prefix}/bin/ddpsim-validate
                          ${SOURCE_DIR}/tests/data/validate/torch-mlp.json --runner torch
                          --out ${WORK}/validate-torch.json
                  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  string(FIND "${err}" "${marker}" at)
  if(rc EQUAL 0 OR at EQUAL -1)
    message(FATAL_ERROR "the installed ddpsim-validate --runner torch did not run the installed "
                        "calibrate.torch (exit ${rc})\n--- stderr\n${err}")
  endif()
endif()

message(STATUS "installed into ${prefix}: ${PROGRAMS}; consumer and ddpsim predict agree on "
               "step_time_s ${cli_step} s from the installed presets")
