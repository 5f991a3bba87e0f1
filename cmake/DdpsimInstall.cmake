# What `cmake --install <build> --prefix P` puts where (GNUInstallDirs):
#   P/lib/libddpsim_model.a, libddpsim_simulator.a   the core libraries (ddpsim::model, ::simulator)
#   P/include/ddpsim/model/, simulator/              their public headers (DDPSIM_PUBLIC_HEADERS):
#                                                    with P/include/ddpsim on the include path,
#                                                    #include "simulator/run.hpp"
#   P/lib/cmake/ddpsim/                              find_package(ddpsim): the two targets and the
#                                                    dependencies their interface needs
#   P/bin/ddpsim, P/bin/ddpsim-<verb>                every program of this build (git-style
#                                                    dispatch runs ddpsim-<verb> from ddpsim's folder)
#   P/share/ddpsim/                                  scenarios/: the presets, data and examples, where
#                                                    model::data_dir() looks from P/bin (model/paths.hpp)
#   P/lib/python3.X/site-packages/ddpsim/            the ddpsim Python package (python/CMakeLists.txt,
#                                                    DDPSIM_PYTHON_INSTALL_DIR; component python)
#   P/share/ddpsim/python/                           the Python packages calibrate.torch (PyTorch's own
#                                                    runner and calibration) and ddpsim_torch, which
#                                                    the programs run from there (model/process_env.hpp)
# The other libraries (calibrate, comm, exec, gui) are the programs' parts and need Gloo,
# OpenBLAS, CUDA or Qt: they are not installed. tests/install checks all of this (ctest -L install).
include(CMakePackageConfigHelpers)

set(DDPSIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ddpsim)
set(DDPSIM_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/ddpsim)

set_target_properties(ddpsim_model PROPERTIES EXPORT_NAME model)
set_target_properties(ddpsim_simulator PROPERTIES EXPORT_NAME simulator)
install(TARGETS ddpsim_model ddpsim_simulator EXPORT ddpsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# An explicit public header set: the run API (simulator/run.hpp), the results document
# (simulator/report.hpp), scenario loading (model/scenario/scenario.hpp), the typed errors a
# caller catches (model/error.hpp), and every header those include, so that they compile. The
# rest (detail/, the engines' and the front-ends' internals) is not installed. tests/install
# checks that every installed header includes only installed ones and that none is under
# detail/; a new include in one of these headers must be added here.
set(DDPSIM_PUBLIC_HEADERS
  model/error.hpp
  model/units.hpp
  model/json_file.hpp
  model/collective_op.hpp
  model/workload/workload.hpp
  model/workload/checkpointing.hpp
  model/workload/float8.hpp
  model/workload/bucketing.hpp
  model/hardware/hardware.hpp
  model/hardware/cluster.hpp
  model/profile/alpha_beta_fit.hpp
  model/profile/profile.hpp
  model/scenario/reliability.hpp
  model/scenario/scenario.hpp
  simulator/collectives/collective.hpp
  simulator/collectives/fabric_fit.hpp
  simulator/prediction/goodput.hpp
  simulator/prediction/memory.hpp
  simulator/prediction/prediction.hpp
  simulator/prediction/uncertainty.hpp
  simulator/analytic/comm_hooks.hpp
  simulator/analytic/sharded_context.hpp
  simulator/analytic/step_plan.hpp
  simulator/analytic/torch_profile.hpp
  simulator/analytic/analytic.hpp
  simulator/event/engine.hpp
  simulator/event/contention.hpp
  simulator/event/simulate.hpp
  simulator/planner.hpp
  simulator/report.hpp
  simulator/run.hpp)
foreach(header IN LISTS DDPSIM_PUBLIC_HEADERS)
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ddpsim/${dir})
endforeach()

# Every program named ddpsim or ddpsim-<verb> that this configuration builds.
ddpsim_project_targets(DDPSIM_INSTALLED_PROGRAMS ${PROJECT_SOURCE_DIR} EXECUTABLE "^ddpsim(-.+)?$")
# Shared libraries outside the system folders (NCCL under /usr/local/cuda, ...) stay on the
# installed programs' RPATH, which CMake otherwise strips at install.
set_target_properties(${DDPSIM_INSTALLED_PROGRAMS} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${DDPSIM_INSTALLED_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Component presets: `cmake --install B --component presets` with `--component python` installs
# the Python package and what it reads without the libraries and programs (tests/python).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${DDPSIM_INSTALL_DATADIR}
        COMPONENT presets)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/calibrate/torch/
        DESTINATION ${DDPSIM_INSTALL_DATADIR}/python/calibrate/torch
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ddpsim_torch/
        DESTINATION ${DDPSIM_INSTALL_DATADIR}/python/ddpsim_torch
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

install(EXPORT ddpsimTargets NAMESPACE ddpsim:: DESTINATION ${DDPSIM_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ddpsimConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ddpsimConfig.cmake
                              INSTALL_DESTINATION ${DDPSIM_INSTALL_CMAKEDIR}
                              PATH_VARS DDPSIM_INSTALL_DATADIR)
# 0.x: a minor release may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ddpsimConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ddpsimConfig.cmake ${PROJECT_BINARY_DIR}/ddpsimConfigVersion.cmake
        DESTINATION ${DDPSIM_INSTALL_CMAKEDIR})
