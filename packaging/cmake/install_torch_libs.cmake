# Runs at install time (install(CODE) in packaging.cmake): copies the LibTorch / CUDA libraries the
# app needs from the wheel the build used into <prefix>/${T5S_LIB_DESTINATION}.
#   T5S_PART=cpu:  what bin/t5studio loads at start-up (libtorch_cpu, libc10, libgomp and the few
#                  CUDA runtime libraries libtorch_cpu itself links: libcudart, libcupti)
#   T5S_PART=cuda: what the lazy CUDA loader (engine/src/torch/cuda_backend.cpp) dlopens —
#                  libtorch_cuda and its dependency closure — plus the libraries CUDA libraries
#                  dlopen themselves (cuDNN's engine libraries, NVRTC's builtins), minus the cpu part.
# The wheel's libraries carry RPATH entries ending in $ORIGIN, so one flat folder serves them all.
# Libraries outside the wheel (libc, libstdc++, ...) are Debian packages: the .deb's Depends.
if(NOT T5S_BUNDLE_TORCH)
  message(STATUS "LibTorch comes from the system: not bundled")
  return()
endif()

# Compared as real paths: the venv may be reached through a symlink.
file(REAL_PATH "${T5S_TORCH_ROOT}" T5S_TORCH_ROOT)

function(t5s_wheel_dependencies out)
  file(GET_RUNTIME_DEPENDENCIES ${ARGN}
       RESOLVED_DEPENDENCIES_VAR resolved
       UNRESOLVED_DEPENDENCIES_VAR unresolved
       CONFLICTING_DEPENDENCIES_PREFIX conflict
       DIRECTORIES "${T5S_TORCH_LIB_DIR}")
  # A soname found both in the wheel and on the system (e.g. libgomp.so.1): the wheel's copy is
  # the one its libraries load (their RPATH ends in $ORIGIN).
  foreach(name ${conflict_FILENAMES})
    list(APPEND resolved ${conflict_${name}})
  endforeach()
  set(kept "")
  foreach(lib ${resolved})
    file(REAL_PATH "${lib}" real)
    string(FIND "${real}" "${T5S_TORCH_ROOT}/" at)
    if(at EQUAL 0)
      list(APPEND kept "${real}")
    endif()
  endforeach()
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

t5s_wheel_dependencies(cpu_libs EXECUTABLES "${T5S_EXECUTABLE}")
if(T5S_PART STREQUAL "cpu")
  set(libs ${cpu_libs})
else()
  set(roots "")
  foreach(name torch_cuda torch_cuda_linalg caffe2_nvrtc)
    if(EXISTS "${T5S_TORCH_LIB_DIR}/lib${name}.so")
      list(APPEND roots "${T5S_TORCH_LIB_DIR}/lib${name}.so")
    endif()
  endforeach()
  if(NOT roots)
    message(STATUS "this LibTorch has no CUDA: the t5studio-cuda component is empty")
    return()
  endif()
  t5s_wheel_dependencies(cuda_libs LIBRARIES ${roots})
  # Loaded with dlopen by the CUDA libraries themselves (not in any DT_NEEDED).
  file(GLOB dlopened "${T5S_TORCH_ROOT}/nvidia/cudnn/lib/libcudnn_*.so.*"
                     "${T5S_TORCH_ROOT}/nvidia/*/lib/libnvrtc-builtins.so.*")
  set(libs ${roots} ${cuda_libs} ${dlopened})
  list(REMOVE_ITEM libs ${cpu_libs})
endif()
list(REMOVE_DUPLICATES libs)
list(SORT libs)
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${T5S_LIB_DESTINATION}" TYPE SHARED_LIBRARY FILES ${libs})
