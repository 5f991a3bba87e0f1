# One golden test: predict SCENARIO, write the results to ACTUAL, compare with EXPECTED.
# cmake -DDDPSIM=... -DCOMPARE=... -DSOURCE_DIR=... -DSCENARIO=rel/path.json
#       -DACTUAL=... -DEXPECTED=... -P run_golden.cmake
cmake_minimum_required(VERSION 3.25)  # script mode: policies (IN_LIST) as in the project
foreach(var DDPSIM COMPARE SOURCE_DIR SCENARIO ACTUAL EXPECTED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_golden.cmake: -D${var}=... is required")
  endif()
endforeach()

if(NOT EXISTS ${EXPECTED})
  message(FATAL_ERROR "${EXPECTED} does not exist: run the golden-update target, review and "
                      "commit the new file")
endif()

file(REMOVE ${ACTUAL})
execute_process(
  COMMAND ${DDPSIM} predict ${SCENARIO} --format json
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_FILE ${ACTUAL}
  ERROR_VARIABLE err
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddpsim predict ${SCENARIO} --format json failed (exit ${rc}):\n${err}")
endif()

execute_process(
  COMMAND ${COMPARE} ${EXPECTED} ${ACTUAL}
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SCENARIO}: results differ from the golden file (exit ${rc}):\n${out}\n"
                      "If the change is intended, run the golden-update target and review the "
                      "diff of tests/golden/.")
endif()
