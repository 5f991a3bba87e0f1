# Runs `ddpsim fidelity --out-dir OUT_DIR`, then either compares OUT_DIR/FIDELITY.md with the
# committed RESULTS_DIR/FIDELITY.md (the results.FIDELITY.md test) or, with -DUPDATE=ON, copies
# FIDELITY.md and fidelity.json into RESULTS_DIR. fidelity.json carries the run context (date,
# revision), so only the Markdown is compared.
# scenarios/data/uncertainty.json (DATA_DIR) is compared and copied the same way.
# cmake -DDDPSIM=... -DOUT_DIR=... -DRESULTS_DIR=... -DDATA_DIR=... [-DHINT=...] [-DUPDATE=ON] -P check_fidelity.cmake
cmake_minimum_required(VERSION 3.25)
file(MAKE_DIRECTORY ${OUT_DIR})
execute_process(
  COMMAND ${DDPSIM} fidelity --out-dir ${OUT_DIR}
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddpsim fidelity failed (exit ${rc}):\n${out}${err}")
endif()

if(UPDATE)
  file(COPY_FILE ${OUT_DIR}/FIDELITY.md ${RESULTS_DIR}/FIDELITY.md ONLY_IF_DIFFERENT)
  file(COPY_FILE ${OUT_DIR}/fidelity.json ${RESULTS_DIR}/fidelity.json)
  file(COPY_FILE ${OUT_DIR}/uncertainty.json ${DATA_DIR}/uncertainty.json ONLY_IF_DIFFERENT)
  message(STATUS "${out}results/FIDELITY.md, results/fidelity.json and "
                 "scenarios/data/uncertainty.json are up to date")
  return()
endif()

if(NOT EXISTS ${RESULTS_DIR}/FIDELITY.md)
  message(FATAL_ERROR "results/FIDELITY.md does not exist: run `${HINT}`")
endif()
# Fails naming `label` when the generated `name` differs from the committed copy in `dir`.
function(require_same name dir label)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT_DIR}/${name} ${dir}/${name}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${label} is out of date: run `${HINT}` "
                        "(compare ${OUT_DIR}/${name} with ${dir}/${name})")
  endif()
endfunction()
require_same(FIDELITY.md ${RESULTS_DIR} results/FIDELITY.md)
# The error bands every prediction carries come from the same rows.
require_same(uncertainty.json ${DATA_DIR} scenarios/data/uncertainty.json)
