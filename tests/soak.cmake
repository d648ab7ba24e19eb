# Soak: t5s_soak drives EngineThread on a tiny real model and checks RSS / fds / threads.
# ctest runs a short version; tests/soak/run_soak.sh runs the full 10,000 generations.
if(TARGET t5s_engine_thread)
  add_executable(t5s_soak ${CMAKE_CURRENT_SOURCE_DIR}/soak/soak.cpp)
  target_link_libraries(t5s_soak PRIVATE t5s_engine_thread)
  # 300 generations, 100 of them warm-up: RSS may grow <= 5 % after warm-up, fds and threads not at all.
  add_test(NAME soak_short
           COMMAND t5s_soak --model ${CMAKE_CURRENT_SOURCE_DIR}/data/models/t5v10-tied-relu
                   --generations 300 --warmup 100 --max-rss-growth 0.05)
  set_tests_properties(soak_short PROPERTIES TIMEOUT 300 LABELS soak)
endif()

# Full disk through the engine thread (fake model, tiny tmpfs; skipped with the reason when not root).
if(TARGET t5s_engine_thread)
  add_executable(test_engine_full_disk ${CMAKE_CURRENT_SOURCE_DIR}/soak/engine_full_disk_test.cpp
                                       ${CMAKE_CURRENT_SOURCE_DIR}/ui/fake_model.cpp)
  target_link_libraries(test_engine_full_disk PRIVATE t5s_engine_thread t5s_catch_main)
  target_include_directories(test_engine_full_disk PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../engine/src)
  t5s_add_skippable_test(engine_full_disk $<TARGET_FILE:test_engine_full_disk>)
  set_tests_properties(engine_full_disk PROPERTIES TIMEOUT 120 LABELS soak)
endif()

# SIGKILL during checkpoint writes, 3 times (tests/soak/crash_loops.sh runs 30): the newest checkpoint
# loads and --resume continues from it.
if(TARGET t5studio)
  add_test(NAME checkpoint_crash_loop
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/soak/checkpoint_crash_loop.sh $<TARGET_FILE:t5studio>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/models/t5v10-tied-relu ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_crash_loop 3)
  set_tests_properties(checkpoint_crash_loop PROPERTIES TIMEOUT 300 LABELS soak)
endif()

# A full disk during checkpoint writes (3 MB tmpfs; skipped, code 77, where mounting needs root).
if(TARGET t5studio)
  add_test(NAME checkpoint_full_disk
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/soak/checkpoint_full_disk.sh $<TARGET_FILE:t5studio>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/models/t5v10-tied-relu ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_full_disk)
  set_tests_properties(checkpoint_full_disk PROPERTIES TIMEOUT 300 LABELS soak SKIP_RETURN_CODE 77)
endif()
