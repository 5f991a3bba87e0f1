# Regenerates one doc with `ddpsim schema --format FORMAT` into GENERATED, then either
# compares it with the COMMITTED copy (the docs test) or, with -DUPDATE=ON, replaces it.
# cmake -DDDPSIM=... -DFORMAT=json|markdown -DGENERATED=... -DCOMMITTED=... -DNAME=docs/x
#       [-DHINT="ninja -C build docs-update"] [-DUPDATE=ON] -P check_generated.cmake
cmake_minimum_required(VERSION 3.25)  # script mode: policies (IN_LIST) as in the project
get_filename_component(dir ${GENERATED} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
execute_process(
  COMMAND ${DDPSIM} schema --format ${FORMAT}
  OUTPUT_FILE ${GENERATED}
  ERROR_VARIABLE err
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddpsim schema --format ${FORMAT} failed (exit ${rc}):\n${err}")
endif()

if(UPDATE)
  file(COPY_FILE ${GENERATED} ${COMMITTED} ONLY_IF_DIFFERENT)
  message(STATUS "${NAME} is up to date")
  return()
endif()

if(NOT EXISTS ${COMMITTED})
  message(FATAL_ERROR "${NAME} does not exist: run `${HINT}`")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E compare_files ${GENERATED} ${COMMITTED}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME} is out of date: run `${HINT}` "
                      "(compare ${GENERATED} with ${COMMITTED})")
endif()
