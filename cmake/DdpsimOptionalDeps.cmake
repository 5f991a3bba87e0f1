# Detection of the optional dependencies behind the DDPSIM_WITH_* tri-state options.
# AUTO builds what it finds and says so; ON fails here, at configure time, with the fix;
# OFF skips the probe. Each sets DDPSIM_HAVE_<X> for the subdirectories that branch on it.

function(ddpsim_resolve opt found fix)
  if(DDPSIM_WITH_${opt} STREQUAL "ON" AND NOT ${found})
    message(FATAL_ERROR "DDPSIM_WITH_${opt}=ON but it was not found. ${fix}")
  endif()
  if(NOT DDPSIM_WITH_${opt} MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "DDPSIM_WITH_${opt} must be AUTO, ON or OFF (got '${DDPSIM_WITH_${opt}}')")
  endif()
  if(${found} AND NOT DDPSIM_WITH_${opt} STREQUAL "OFF")
    set(DDPSIM_HAVE_${opt} ON PARENT_SCOPE)
  else()
    set(DDPSIM_HAVE_${opt} OFF PARENT_SCOPE)
  endif()
endfunction()

# CUDA: check_language must run at the top level (enable_language's OPTIONAL does not work).
set(_cuda_found OFF)
if(NOT DDPSIM_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)  # H100/H200; override with -DCMAKE_CUDA_ARCHITECTURES=...
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(_cuda_found ON)
    endif()
  endif()
endif()
ddpsim_resolve(CUDA _cuda_found "Install the CUDA Toolkit (nvcc) or pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc.")

set(_nccl_found OFF)
if(DDPSIM_HAVE_CUDA AND NOT DDPSIM_WITH_NCCL STREQUAL "OFF")
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS $ENV{NCCL_HOME}/include ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS $ENV{NCCL_HOME}/lib ${CUDAToolkit_LIBRARY_DIR})
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(_nccl_found ON)
    if(NOT TARGET ddpsim::nccl)
      add_library(ddpsim::nccl UNKNOWN IMPORTED)
      set_target_properties(ddpsim::nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                            INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
    endif()
  endif()
endif()
ddpsim_resolve(NCCL _nccl_found "Install NCCL (nccl.h, libnccl) or set NCCL_HOME; it needs CUDA.")

set(_gloo_found OFF)
if(NOT DDPSIM_WITH_GLOO STREQUAL "OFF")
  find_package(Gloo QUIET)
  if(Gloo_FOUND OR TARGET gloo)
    set(_gloo_found ON)
  endif()
endif()
ddpsim_resolve(GLOO _gloo_found "apt-get install libgloo-dev")

set(_blas_found OFF)
if(NOT DDPSIM_WITH_BLAS STREQUAL "OFF")
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  # cblas.h of the OpenBLAS build (the Debian alternative may point at another BLAS); BLAS::BLAS
  # and DDPSIM_OPENBLAS_INCLUDE_DIR serve calibrate/ and calibrate/exec alike.
  find_path(DDPSIM_OPENBLAS_INCLUDE_DIR cblas.h
            PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas
                  /usr/include/x86_64-linux-gnu /usr/include NO_DEFAULT_PATH)
  if(BLAS_FOUND AND DDPSIM_OPENBLAS_INCLUDE_DIR)
    set(_blas_found ON)
  endif()
endif()
ddpsim_resolve(BLAS _blas_found "apt-get install libopenblas-dev")

set(_gui_found OFF)
if(NOT DDPSIM_WITH_GUI STREQUAL "OFF")
  find_package(Qt6 6.4 QUIET COMPONENTS Widgets Charts Test)
  if(Qt6_FOUND)
    set(_gui_found ON)
  endif()
endif()
ddpsim_resolve(GUI _gui_found "apt-get install qt6-base-dev qt6-charts-dev")

# Python module (pybind11): the run API for notebooks and scripts. AUTO leaves it out of
# sanitizer and fuzzing builds, whose runtime a plain python3 cannot load.
set(_python_found OFF)
if(NOT DDPSIM_WITH_PYTHON STREQUAL "OFF" AND
   (DDPSIM_WITH_PYTHON STREQUAL "ON" OR (NOT DDPSIM_SANITIZE AND NOT DDPSIM_FUZZ)))
  find_package(Python3 3.9 QUIET COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    find_package(pybind11 2.6 CONFIG QUIET)
    if(pybind11_FOUND)
      set(_python_found ON)
    endif()
  endif()
endif()
ddpsim_resolve(PYTHON _python_found "apt-get install python3-dev pybind11-dev")

# A Python that can `import torch` (Debian's python3-torch installs into /usr/bin/python3's
# dist-packages, which a pyenv or venv python3 first on PATH does not see). Tests and runners
# that need real PyTorch use DDPSIM_TORCH_PYTHON; empty when none is found (those tests are
# then registered to skip with the reason; label `torch`).
set(DDPSIM_TORCH_PYTHON "" CACHE STRING "a python3 that can import torch (empty: search)")
if(NOT DDPSIM_TORCH_PYTHON)
  foreach(_candidate ${Python3_EXECUTABLE} /usr/bin/python3)
    if(_candidate AND EXISTS ${_candidate})
      execute_process(COMMAND ${_candidate} -c "import torch, torch.distributed"
                      RESULT_VARIABLE _torch_rc OUTPUT_QUIET ERROR_QUIET TIMEOUT 60)
      if(_torch_rc EQUAL 0)
        set(_ddpsim_torch_python ${_candidate})
        break()
      endif()
    endif()
  endforeach()
  if(_ddpsim_torch_python)
    message(STATUS "ddpsim: PyTorch found by ${_ddpsim_torch_python}")
  else()
    message(STATUS "ddpsim: no python3 that imports torch (apt-get install python3-torch); torch tests skip")
  endif()
else()
  set(_ddpsim_torch_python ${DDPSIM_TORCH_PYTHON})
endif()
set(DDPSIM_TORCH_PYTHON_EXECUTABLE "${_ddpsim_torch_python}")
