# t5s_trainer: local fine-tuning / training from scratch. Torch-free public header
# (t5s/trainer.h); LibTorch linked PRIVATE.
add_library(t5s_trainer STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/data.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/batching.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/spm_train.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/memory.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/block_cache.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/memory_plan.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/optim.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/core.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/checkpoint.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/run_folder.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/trainer.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/step_json.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/runner_setup.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/runner_io.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/runner_lora.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/distributed.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/grad_reducer.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/nccl_loader.cpp
)
target_include_directories(t5s_trainer PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(t5s_trainer PUBLIC t5s_engine PRIVATE t5s_torch_cpu)
target_compile_options(t5s_trainer PRIVATE ${TORCH_CXX_FLAGS})
# sentencepiece_trainer.h: the trainer part of SentencePiece (libsentencepiece-dev ships it in
# libsentencepiece_train).
find_library(T5S_SPM_TRAIN_LIB NAMES sentencepiece_train)
if(NOT T5S_SPM_TRAIN_LIB)
  message(FATAL_ERROR "libsentencepiece_train not found (apt-get install libsentencepiece-dev)")
endif()
target_link_libraries(t5s_trainer PRIVATE ${T5S_SPM_TRAIN_LIB})
# c10d (ProcessGroupGloo, TCPStore) is inside libtorch_cpu; the wheel ships no Gloo headers, which
# ProcessGroupGloo.hpp includes: Debian's libgloo-dev provides them (headers only, nothing linked).
find_path(T5S_GLOO_INCLUDE_DIR gloo/rendezvous/store.h)
if(NOT T5S_GLOO_INCLUDE_DIR)
  message(FATAL_ERROR "Gloo headers not found (apt-get install libgloo-dev): needed for data-parallel training")
endif()
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/distributed.cpp PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
if(NOT T5S_GLOO_INCLUDE_DIR STREQUAL "/usr/include")  # -I/usr/include would break #include_next
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/trainer/distributed.cpp PROPERTIES INCLUDE_DIRECTORIES "${T5S_GLOO_INCLUDE_DIR}")
endif()
target_precompile_headers(t5s_trainer PRIVATE <ATen/ATen.h>)
include(${CMAKE_CURRENT_LIST_DIR}/nccl.cmake)
