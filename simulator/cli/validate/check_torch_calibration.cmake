# torch.calibrate (ctest -L torch): ddpsim-calibrate --backend torch adds a "torch" section to a
# copy of the tiny profile that the strict reader accepts (the workload's layers and optimizer,
# gloo's all-reduces, the contention with a synthetic compute; no pass over the job itself), and
# the one path from it to a prediction: `ddpsim validate --runner torch --profile P` predicts
# every point exactly as `ddpsim predict --profile P` does (six quantities, to the digit), with
# the calibration's optimizer. The scenario is SCENARIO with what the runner runs spelled out
# (first_bucket_mb 1, optimizer_impl for_loop) and no comm hook. A missing base profile and a
# bad torch key are one line, exit 2.
#   cmake -DCALIBRATE=... -DVALIDATE=... -DPREDICT=... -DSCENARIO=... -DTINY=... -DWORK=dir -P this
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(profile ${WORK}/profile.json)
file(COPY_FILE ${TINY} ${profile})
file(READ ${SCENARIO} scen)
string(JSON scen SET "${scen}" parallelism first_bucket_mb 1)
string(JSON scen SET "${scen}" parallelism comm_hook "\"none\"")
string(JSON scen SET "${scen}" training optimizer_impl "\"for_loop\"")
set(SCENARIO ${WORK}/scenario.json)
file(WRITE ${SCENARIO} "${scen}")

execute_process(COMMAND ${CALIBRATE} --backend torch --scenario ${SCENARIO} --quick
                        --out ${WORK}/missing.json
                RESULT_VARIABLE rc ERROR_VARIABLE err)
string(STRIP "${err}" err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^ddpsim-calibrate: [^\n]*missing.json: /: expected this machine's CPU profile[^\n]*$")
  message(FATAL_ERROR "missing base profile: exit ${rc}, stderr:\n${err}")
endif()

execute_process(COMMAND ${CALIBRATE} --backend torch --scenario ${SCENARIO} --quick --out ${profile}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddpsim-calibrate --backend torch: exit ${rc}\n${err}")
endif()
file(READ ${profile} doc)
string(JSON n LENGTH "${doc}" torch workloads)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected 1 calibrated workload (the sweep's points share it), got ${n}")
endif()
string(JSON layers LENGTH "${doc}" torch workloads 0 layers)
string(JSON name GET "${doc}" torch workloads 0 layers 1 name)
string(JSON opt GET "${doc}" torch workloads 0 optimizer_s)
string(JSON params GET "${doc}" torch workloads 0 parameters)
string(JSON sizes LENGTH "${doc}" torch all_reduce)
string(JSON gemms LENGTH "${doc}" gemms)
# 256*512 + 512 + 512*256 + 256 parameters; the sizes 64 KiB..2 MiB, the power of two at or
# above their 1,051,648 gradient bytes.
if(NOT layers EQUAL 2 OR NOT name STREQUAL "fc1" OR NOT params EQUAL 262912 OR NOT sizes EQUAL 6
   OR gemms EQUAL 0 OR NOT opt GREATER 0)
  message(FATAL_ERROR "torch section: ${layers} layers (${name}), ${params} parameters, "
                      "${sizes} all-reduce sizes, optimizer ${opt} s, ${gemms} CPU GEMMs kept")
endif()

# Contention: a synthetic compute with all-reduces inside its window, per size, both factors set.
string(JSON inside GET "${doc}" torch contention all_reduces_inside_compute)
string(JSON cslow GET "${doc}" torch contention compute_slowdown)
string(JSON aslow GET "${doc}" torch contention all_reduce_slowdown)
string(JSON rows LENGTH "${doc}" torch contention by_size)
string(JSON what GET "${doc}" torch contention compute)
if(inside LESS 1 OR NOT cslow GREATER 0 OR NOT aslow GREATER 0 OR rows LESS 1
   OR NOT what MATCHES "^synthetic")
  message(FATAL_ERROR "torch contention: ${inside} all-reduces inside the compute, slowdowns "
                      "${cslow} (compute) and ${aslow} (all-reduce), ${rows} sizes, ${what}")
endif()

execute_process(COMMAND ${VALIDATE} ${SCENARIO} --runner torch --profile ${profile} --steps 2
                        --out ${WORK}/validation.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddpsim-validate --runner torch: exit ${rc}\n${out}\n${err}")
endif()
execute_process(COMMAND ${PREDICT} predict ${SCENARIO} --profile ${profile} --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE predicted ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddpsim predict --profile: exit ${rc}\n${err}")
endif()
file(READ ${WORK}/validation.json v)
string(JSON np LENGTH "${v}" points)
string(JSON npred LENGTH "${predicted}" results)
if(NOT np EQUAL npred)
  message(FATAL_ERROR "validate has ${np} points, predict ${npred}")
endif()
math(EXPR last "${np} - 1")
set(compared 0)
foreach(i RANGE ${last})
  string(JSON nrows LENGTH "${v}" points ${i} rows)
  math(EXPR lastrow "${nrows} - 1")
  foreach(r RANGE ${lastrow})
    string(JSON q GET "${v}" points ${i} rows ${r} quantity)
    if(NOT q MATCHES "^(step|forward|backward|optimizer)_time_s$|^exposed_comm_s$|^comm_time_s$")
      continue()
    endif()
    string(JSON a GET "${v}" points ${i} rows ${r} analytic)
    string(JSON p GET "${predicted}" results ${i} ${q})
    if(NOT a STREQUAL p)
      message(FATAL_ERROR "point ${i} ${q}: validate predicted ${a}, ddpsim predict ${p}")
    endif()
    math(EXPR compared "${compared} + 1")
    if(q STREQUAL "optimizer_time_s")
      # The calibration's optimizer, to the digits the document keeps.
      string(REGEX REPLACE "^0\\.([0-9][0-9][0-9][0-9][0-9][0-9][0-9]).*" "\\1" x "${a}")
      string(REGEX REPLACE "^0\\.([0-9][0-9][0-9][0-9][0-9][0-9][0-9]).*" "\\1" y "${opt}")
      if(NOT x STREQUAL y)
        message(FATAL_ERROR "point ${i}: predicted optimizer ${a} s, the calibration's ${opt} s")
      endif()
    endif()
  endforeach()
endforeach()
if(NOT compared EQUAL 12)
  message(FATAL_ERROR "compared ${compared} quantities, expected 6 for each of 2 points")
endif()

# The strict reader: a bad torch key is one line naming the file and its pointer, exit 2.
string(JSON bad SET "${doc}" torch all_reduce 0 pair_s "-1")
file(WRITE ${WORK}/bad.json "${bad}")
execute_process(COMMAND ${VALIDATE} ${SCENARIO} --runner torch --profile ${WORK}/bad.json
                        --steps 1 --out ${WORK}/bad-validation.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${err}" err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "bad.json: /torch/all_reduce/0/pair_s" OR err MATCHES "\n")
  message(FATAL_ERROR "bad torch key: exit ${rc}, stderr:\n${err}")
endif()
message(STATUS "torch calibration: validate predicted what ddpsim predict --profile does "
               "(${compared} quantities), optimizer ${opt} s")
