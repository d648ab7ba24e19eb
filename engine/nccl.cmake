# libt5s_nccl.so: ProcessGroupNCCL (inside libtorch_cuda) behind a C entry point, dlopen'ed by
# trainer/nccl_loader.cpp for CUDA ranks. The engine itself never links libtorch_cuda, so the
# module is built only when this LibTorch has CUDA, and it ships in the t5studio-cuda package.
if(NOT T5S_WITH_CUDA OR NOT T5S_TORCH_CUDA_LIBRARY)
  return()
endif()
find_path(T5S_NCCL_INCLUDE_DIR nccl.h PATHS "${TORCH_INSTALL_PREFIX}/../nvidia/nccl/include" NO_DEFAULT_PATH)
find_path(T5S_NCCL_INCLUDE_DIR nccl.h)
if(NOT T5S_NCCL_INCLUDE_DIR)
  message(STATUS "T5 Studio: nccl.h not found: CUDA ranks will all-reduce through Gloo (no NCCL module)")
  return()
endif()
add_library(t5s_nccl MODULE ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/nccl_module.cpp)
target_include_directories(t5s_nccl PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src ${T5S_NCCL_INCLUDE_DIR})
# Headers of the whole torch target (CUDA's too); libraries: the CUDA half and LibTorch's CPU half
# only (not the libtorch.so stub, which no package ships).
target_include_directories(t5s_nccl SYSTEM PRIVATE $<TARGET_PROPERTY:torch,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(t5s_nccl PRIVATE t5s_torch_cpu ${T5S_TORCH_CUDA_LIBRARY} ${C10_CUDA_LIBRARY})
set_target_properties(t5s_nccl PROPERTIES CXX_VISIBILITY_PRESET hidden INSTALL_RPATH "$ORIGIN")
add_dependencies(t5s_trainer t5s_nccl)
set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/nccl_loader.cpp APPEND PROPERTY COMPILE_DEFINITIONS
             T5S_NCCL_MODULE_PATH="$<TARGET_FILE:t5s_nccl>")
install(TARGETS t5s_nccl LIBRARY DESTINATION lib/t5studio COMPONENT t5studio-cuda)
