# Benchmark driver (not a test; see tests/bench/README.md): build/tests/t5s_bench.
# Included by tests/CMakeLists.txt. Its training step runs the trainer's own path (trainer/core.h),
# hence the engine/src include path and the direct LibTorch link.
add_executable(t5s_bench EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/t5s_bench.cpp")
# The training step: the trainer's loading, loss, AdamW and block cache.
target_link_libraries(t5s_bench PRIVATE t5s_engine t5s_trainer t5s_torch_cpu)
target_include_directories(t5s_bench PRIVATE "${CMAKE_SOURCE_DIR}/engine/src")
target_compile_options(t5s_bench PRIVATE ${TORCH_CXX_FLAGS})
target_compile_definitions(t5s_bench PRIVATE T5S_VERSION="${PROJECT_VERSION}" T5S_TORCH_VERSION="${Torch_VERSION}")

# Developer tool: time per phase and per ATen operator of a generation request (tests/bench/README.md).
add_executable(t5s_profile EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/t5s_profile.cpp")
target_link_libraries(t5s_profile PRIVATE t5s_engine t5s_torch_cpu)
target_include_directories(t5s_profile PRIVATE "${CMAKE_SOURCE_DIR}/engine/src")
target_compile_options(t5s_profile PRIVATE ${TORCH_CXX_FLAGS})

# Developer tool: our int8 VNNI linear vs FBGEMM and oneDNN per layer shape (tests/bench/README.md).
add_executable(t5s_int8_bench EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/t5s_int8_bench.cpp")
target_link_libraries(t5s_int8_bench PRIVATE t5s_engine t5s_torch_cpu)
target_include_directories(t5s_int8_bench PRIVATE "${CMAKE_SOURCE_DIR}/engine/src")
target_compile_options(t5s_int8_bench PRIVATE ${TORCH_CXX_FLAGS})

# Developer tool: chrF parity with sacrebleu at scale + near-duplicate finder timing/agreement
# (tests/bench/quality_bench.py). Torch-free.
add_executable(t5s_quality_bench EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/quality_bench.cpp")
target_link_libraries(t5s_quality_bench PRIVATE t5s_core)

# Embedder cost next to generation (tests/bench/embed_bench.sh).
add_executable(t5s_embed_bench EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/embed_bench.cpp")
target_link_libraries(t5s_embed_bench PRIVATE t5s_engine)

# LoRA vs full fine-tuning: peak RSS and step time per mode (tests/bench/lora_bench.sh).
add_executable(t5s_lora_bench EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/lora_bench.cpp")
target_link_libraries(t5s_lora_bench PRIVATE t5s_engine t5s_trainer t5s_torch_cpu)
target_include_directories(t5s_lora_bench PRIVATE "${CMAKE_SOURCE_DIR}/engine/src")
target_compile_options(t5s_lora_bench PRIVATE ${TORCH_CXX_FLAGS})

# Developer tool: time per continuous-batching step, joining vs decoding, and its ATen operators.
add_executable(t5s_serve_profile EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/serve_profile.cpp")
target_link_libraries(t5s_serve_profile PRIVATE t5s_engine t5s_torch_cpu)
target_include_directories(t5s_serve_profile PRIVATE "${CMAKE_SOURCE_DIR}/engine/src")
target_compile_options(t5s_serve_profile PRIVATE ${TORCH_CXX_FLAGS})

# Developer tool: our fp32 panel kernel vs MKL packed sgemm and at::linear per layer shape and row
# count (tests/bench/README.md).
add_executable(t5s_fp32_gemm_bench EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/t5s_fp32_gemm_bench.cpp")
target_link_libraries(t5s_fp32_gemm_bench PRIVATE t5s_engine t5s_torch_cpu)
target_include_directories(t5s_fp32_gemm_bench PRIVATE "${CMAKE_SOURCE_DIR}/engine/src")
target_compile_options(t5s_fp32_gemm_bench PRIVATE ${TORCH_CXX_FLAGS})

# Per-step cost of each logits processor, warper and stopping criterion (tests/bench/README.md).
add_executable(t5s_processor_cost_bench EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/processor_cost_bench.cpp")
target_link_libraries(t5s_processor_cost_bench PRIVATE t5s_engine t5s_torch_cpu)
target_include_directories(t5s_processor_cost_bench PRIVATE "${CMAKE_SOURCE_DIR}/engine/src")
target_compile_options(t5s_processor_cost_bench PRIVATE ${TORCH_CXX_FLAGS})

# Start-up split (tests/bench/startup_bench.sh): one main() that returns at once, linked with nothing,
# with LibTorch's CPU half, and with every library t5studio links. --no-as-needed keeps the unused
# shared libraries in the executable so the loader maps and initialises them as it does for t5studio.
add_executable(t5s_startup_plain EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/startup_probe.cpp")
add_executable(t5s_startup_torch EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/startup_probe.cpp")
target_link_libraries(t5s_startup_torch PRIVATE t5s_torch_cpu)
target_link_options(t5s_startup_torch PRIVATE "LINKER:--no-as-needed")
add_executable(t5s_startup_linked EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/startup_probe.cpp")
# cpp-httplib's imported target is local to app/: the probe goes without that one small library.
get_target_property(t5s_startup_app_libs t5studio LINK_LIBRARIES)
list(FILTER t5s_startup_app_libs EXCLUDE REGEX "^PkgConfig::")
target_link_libraries(t5s_startup_linked PRIVATE ${t5s_startup_app_libs})
target_link_options(t5s_startup_linked PRIVATE "LINKER:--no-as-needed")
