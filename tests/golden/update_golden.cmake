# golden-update: rewrites GOLDEN_DIR/<name>.expected.json for every scenario from the current
# build. The run-specific "context" block is stripped so the files only change when results do.
# cmake -DDDPSIM=... -DCOMPARE=... -DSOURCE_DIR=... -DGOLDEN_DIR=... -DWORK_DIR=...
#       -DSCENARIOS=a.json|examples/b.json -P update_golden.cmake
cmake_minimum_required(VERSION 3.25)  # script mode: policies (IN_LIST) as in the project
string(REPLACE "|" ";" SCENARIOS "${SCENARIOS}")
file(MAKE_DIRECTORY ${WORK_DIR})
foreach(rel IN LISTS SCENARIOS)
  get_filename_component(name ${rel} NAME_WE)
  set(raw ${WORK_DIR}/${name}.update.json)
  execute_process(
    COMMAND ${DDPSIM} predict scenarios/${rel} --format json
    WORKING_DIRECTORY ${SOURCE_DIR}
    OUTPUT_FILE ${raw}
    ERROR_VARIABLE err
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ddpsim predict scenarios/${rel} failed (exit ${rc}):\n${err}")
  endif()
  execute_process(
    COMMAND ${COMPARE} --strip-context ${raw} ${GOLDEN_DIR}/${name}.expected.json
    ERROR_VARIABLE err
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot write ${GOLDEN_DIR}/${name}.expected.json:\n${err}")
  endif()
  message(STATUS "wrote tests/golden/${name}.expected.json")
endforeach()
