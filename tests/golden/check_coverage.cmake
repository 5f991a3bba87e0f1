# Every *.json directly in the scenario FOLDERS must have a golden test, and every
# *.expected.json in GOLDEN_DIR must belong to a registered scenario.
# cmake -DSCENARIO_DIR=... -DGOLDEN_DIR=... -DFOLDERS=a|b -DREGISTERED=x.json|b/y.json
#       -P check_coverage.cmake
cmake_minimum_required(VERSION 3.25)  # script mode: policies (IN_LIST) as in the project
string(REPLACE "|" ";" FOLDERS "${FOLDERS}")
string(REPLACE "|" ";" REGISTERED "${REGISTERED}")

set(problems "")
set(registered_names "")
foreach(rel IN LISTS REGISTERED)
  get_filename_component(name ${rel} NAME_WE)
  list(APPEND registered_names ${name})
  if(NOT EXISTS ${SCENARIO_DIR}/${rel})
    string(APPEND problems "  scenarios/${rel} is registered but does not exist\n")
  endif()
endforeach()

foreach(folder IN LISTS FOLDERS)
  file(GLOB found RELATIVE ${SCENARIO_DIR}/${folder} ${SCENARIO_DIR}/${folder}/*.json)
  foreach(f IN LISTS found)
    if(folder STREQUAL ".")
      set(rel ${f})
    else()
      set(rel ${folder}/${f})
    endif()
    if(NOT rel IN_LIST REGISTERED)
      string(APPEND problems
        "  scenarios/${rel} has no golden test: add it to DDPSIM_GOLDEN_SCENARIOS in "
        "tests/golden/CMakeLists.txt and run the golden-update target\n")
    endif()
  endforeach()
endforeach()

file(GLOB goldens RELATIVE ${GOLDEN_DIR} ${GOLDEN_DIR}/*.expected.json)
foreach(g IN LISTS goldens)
  string(REGEX REPLACE "\\.expected\\.json$" "" name ${g})
  if(NOT name IN_LIST registered_names)
    string(APPEND problems "  tests/golden/${g} belongs to no registered scenario: delete it\n")
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "golden coverage:\n${problems}")
endif()
list(LENGTH REGISTERED n)
message(STATUS "golden coverage: ${n} scenarios, all covered")
