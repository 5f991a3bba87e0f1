# torch.calibrate (ctest -L torch): ddpsim-calibrate --backend torch adds a "torch" section to a
# copy of the tiny profile that the strict reader accepts, and ddpsim-validate --runner torch
# predicts with it: the point's predicted optimizer time is the torch calibration's own
# (its DDP job pass's optimizer_s; the tiny profile's model gives another), the job pass timed
# at least one bucket's all-reduce, and the document keeps the prediction
# without it. A missing base profile and a bad torch key are one line, exit 2.
#   cmake -DCALIBRATE=... -DVALIDATE=... -DSCENARIO=... -DTINY=... -DWORK=dir -P this
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(profile ${WORK}/profile.json)
file(COPY_FILE ${TINY} ${profile})

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
# The optimizer the prediction uses is the one timed inside the DDP job pass (issue 16).
string(JSON opt GET "${doc}" torch workloads 0 job optimizer_s)
string(JSON opt_off GET "${doc}" torch workloads 0 job_overlap_off optimizer_s)
string(JSON job_buckets LENGTH "${doc}" torch workloads 0 job bucket_bytes)
string(JSON job_occ GET "${doc}" torch workloads 0 job comm_occupancy_s)
# The backward as the job computes it (simulator/measured/torch_costs.hpp torch_job_backward_factor).
string(JSON job_bwd_off GET "${doc}" torch workloads 0 job_overlap_off backward_s)
if(job_buckets LESS 1 OR NOT job_occ GREATER 0 OR NOT job_bwd_off GREATER 0)
  message(FATAL_ERROR "torch job pass: ${job_buckets} buckets, occupancy ${job_occ} s, "
                      "overlap-off backward ${job_bwd_off} s")
endif()
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

# Contention (issue 16): measured with all-reduces inside the compute window, both factors set.
string(JSON inside GET "${doc}" torch contention all_reduces_inside_compute)
string(JSON cslow GET "${doc}" torch contention compute_slowdown)
string(JSON aslow GET "${doc}" torch contention all_reduce_slowdown)
if(inside LESS 1 OR NOT cslow GREATER 0 OR NOT aslow GREATER 0)
  message(FATAL_ERROR "torch contention: ${inside} all-reduces inside the compute, slowdowns "
                      "${cslow} (compute) and ${aslow} (all-reduce)")
endif()

execute_process(COMMAND ${VALIDATE} ${SCENARIO} --runner torch --profile ${profile} --steps 2
                        --out ${WORK}/validation.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddpsim-validate --runner torch: exit ${rc}\n${out}\n${err}")
endif()
file(READ ${WORK}/validation.json v)
string(JSON np LENGTH "${v}" points)
math(EXPR last "${np} - 1")
foreach(i RANGE ${last})
  string(JSON nrows LENGTH "${v}" points ${i} rows)
  math(EXPR lastrow "${nrows} - 1")
  set(pred "")
  foreach(r RANGE ${lastrow})
    string(JSON q GET "${v}" points ${i} rows ${r} quantity)
    if(q STREQUAL "optimizer_time_s")
      string(JSON pred GET "${v}" points ${i} rows ${r} analytic)
      string(JSON pred_ev GET "${v}" points ${i} rows ${r} event)
    endif()
  endforeach()
  string(JSON without GET "${v}" points ${i} without_torch_calibration optimizer_time_s)
  # The prediction's optimizer is the calibration's number (to the nanosecond the document
  # rounds to: the job pass with the point's overlap setting), and the model without it predicts
  # another.
  string(JSON overlap ERROR_VARIABLE no_key GET "${v}" points ${i} point parallelism.overlap)
  set(want "${opt}")
  if(overlap STREQUAL "OFF" OR overlap STREQUAL "false")
    set(want "${opt_off}")
  endif()
  foreach(x pred pred_ev)
    string(REGEX REPLACE "^0\\.([0-9][0-9][0-9][0-9][0-9][0-9][0-9]).*" "\\1" a "${${x}}")
    string(REGEX REPLACE "^0\\.([0-9][0-9][0-9][0-9][0-9][0-9][0-9]).*" "\\1" b "${want}")
    if(NOT a STREQUAL b)
      message(FATAL_ERROR "point ${i}: predicted optimizer ${x} ${${x}} s, the torch "
                          "calibration's ${want} s (overlap ${overlap})")
    endif()
  endforeach()
  if(without STREQUAL pred)
    message(FATAL_ERROR "point ${i}: the prediction without the torch calibration is the same "
                        "(${without} s)")
  endif()
endforeach()

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
message(STATUS "torch calibration: optimizer ${opt} s used by validate (model without it: "
               "${without} s)")
