# Fails when a C++ file of the project is not clang-format clean (run `clang-format -i FILE`).
file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/model/*.cpp ${SOURCE_DIR}/model/*.hpp
     ${SOURCE_DIR}/simulator/*.cpp ${SOURCE_DIR}/simulator/*.hpp
     ${SOURCE_DIR}/calibrate/*.cpp ${SOURCE_DIR}/calibrate/*.hpp ${SOURCE_DIR}/calibrate/*.cu
     ${SOURCE_DIR}/gui/*.cpp ${SOURCE_DIR}/gui/*.hpp
     ${SOURCE_DIR}/tests/*.cpp ${SOURCE_DIR}/tests/*.hpp)
set(bad "")
foreach(f ${files})
  execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${SOURCE_DIR}/${f}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    list(APPEND bad ${f})
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "not clang-format clean (run clang-format -i on them): ${bad}")
endif()
