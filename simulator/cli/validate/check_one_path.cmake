# validate.torch_sweeps_one_path: what `ddpsim validate SWEEP --runner torch --profile P`
# predicts is what `ddpsim predict SWEEP --profile P` gives, point for point, over the four
# torch sweeps, on a profile whose torch section calibrated every one of their workloads
# (tests/data/profile/torch-sweeps-profile.json: a real `ddpsim calibrate --backend torch` of
# this machine kind). validate --predict-only prints the predictions it would compare with the
# measurements; six quantities of every point must be the same numbers, to the last digit, and
# every point must have used the torch calibration (its layers: the workload's own optimizer
# time, not the model's).
#   cmake -DVALIDATE=... -DPREDICT=... -DPROFILE=... "-DSWEEPS=a.json;b.json" -DWORK=dir -P this
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(total 0)
set(i 0)
foreach(sweep IN LISTS SWEEPS)
  execute_process(COMMAND ${VALIDATE} ${sweep} --runner torch --profile ${PROFILE} --predict-only
                          --out ${WORK}/validate-${i}.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ddpsim-validate ${sweep} --predict-only: exit ${rc}\n${err}")
  endif()
  execute_process(COMMAND ${PREDICT} predict ${sweep} --profile ${PROFILE} --format json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE predicted ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ddpsim predict ${sweep} --profile: exit ${rc}\n${err}")
  endif()
  file(READ ${WORK}/validate-${i}.json validated)
  string(JSON nv LENGTH "${validated}" results)
  string(JSON np LENGTH "${predicted}" results)
  if(NOT nv EQUAL np OR nv LESS 1)
    message(FATAL_ERROR "${sweep}: validate predicted ${nv} points, ddpsim predict ${np}")
  endif()
  math(EXPR last "${nv} - 1")
  foreach(k RANGE ${last})
    foreach(q step_time_s forward_time_s backward_time_s optimizer_time_s exposed_comm_s
              comm_time_s)
      string(JSON a GET "${validated}" results ${k} ${q})
      string(JSON b GET "${predicted}" results ${k} ${q})
      if(NOT a STREQUAL b)
        message(FATAL_ERROR "${sweep} point ${k} ${q}: validate ${a}, ddpsim predict ${b}")
      endif()
      math(EXPR total "${total} + 1")
    endforeach()
    # The torch calibration was applied: the prediction names it among its measured sources.
    string(JSON notes GET "${predicted}" results ${k} measured notes)
    if(NOT notes MATCHES "torch calibration: layers and optimizer")
      message(FATAL_ERROR "${sweep} point ${k}: no torch calibration in ${notes}")
    endif()
  endforeach()
  math(EXPR i "${i} + 1")
endforeach()
message(STATUS "one path: ${total} predicted quantities of ${i} sweeps identical")
