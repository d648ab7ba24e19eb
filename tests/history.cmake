# History store, export and the `history` / `export` CLI (torch-free). Included by tests/CMakeLists.txt.
find_package(Catch2 REQUIRED)
file(GLOB T5S_HISTORY_TEST_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/history/*.cpp")
set(T5S_HISTORY_APP_DIR "${CMAKE_CURRENT_SOURCE_DIR}/../app")
add_executable(test_history
  ${T5S_HISTORY_TEST_SOURCES}
  "${T5S_HISTORY_APP_DIR}/common/args.cpp"
  "${T5S_HISTORY_APP_DIR}/cli/cli_history.cpp"
  "${T5S_HISTORY_APP_DIR}/cli/cli_export.cpp")
target_include_directories(test_history PRIVATE "${T5S_HISTORY_APP_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}/../engine/src")
target_link_libraries(test_history PRIVATE t5s_history Catch2::Catch2 SQLite::SQLite3 CLI11::CLI11)
add_test(NAME test_history COMMAND test_history "~[full_disk]~[crash]")
set_tests_properties(test_history PROPERTIES TIMEOUT 300 LABELS history)
# Crash loops (T5S_CRASH_ITERATIONS, 40 here; tests/soak/crash_loops.sh runs the long ones)
# and a full disk on a tiny tmpfs (skipped, with the reason, where mounting needs root).
add_test(NAME history_crash_loops COMMAND test_history "[crash]")
set_tests_properties(history_crash_loops PROPERTIES TIMEOUT 300 LABELS history ENVIRONMENT "T5S_CRASH_ITERATIONS=40")
t5s_add_skippable_test(history_full_disk $<TARGET_FILE:test_history> "[full_disk]")
set_tests_properties(history_full_disk PROPERTIES TIMEOUT 120 LABELS history)

# Benchmark (not a test): build/tests/history_bench [ROWS] [DB_DIR]
add_executable(history_bench EXCLUDE_FROM_ALL "${CMAKE_CURRENT_SOURCE_DIR}/bench/history_bench.cpp")
target_link_libraries(history_bench PRIVATE t5s_history)

# `export --format hf-dataset` opened by Hugging Face `datasets` (PyPI, in .venv-hf made by the test
# itself: its huggingface_hub is newer than the project venv's transformers accepts): the same rows and
# features, the card's numbers and plots checked against the data; and `generate --report`'s
# statistics and plots against that run's results. SKIPPED (77) only when `datasets`
# cannot be installed. `ctest -L hf_dataset` runs it alone.
add_test(NAME hf_dataset_export COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hf_dataset/run_in_hf_venv.sh test_hf_dataset.py
         --t5studio $<TARGET_FILE:t5studio> --model ${T5S_TEST_DATA}/models/t5v10-tied-relu --work ${CMAKE_CURRENT_BINARY_DIR}/hf_dataset_work)
set_tests_properties(hf_dataset_export PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS hf_dataset RESOURCE_LOCK hf_dataset_venv)
