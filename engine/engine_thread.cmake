# t5s_engine_thread: the EngineThread (commands in, events out) over t5s_engine and t5s_history.
# Torch stays PRIVATE inside t5s_engine; nothing here includes torch or SQLite headers.
add_library(t5s_engine_thread STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/routing.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/engine_thread.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/model_jobs.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/recipe_jobs.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/kept_recipe.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/io_jobs.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/hub_jobs.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/dataset_reader.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/learn_jobs.cpp
)
target_include_directories(t5s_engine_thread PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                                             PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
# Training jobs (StartTraining) run t5s_trainer on the model lane; PullModel runs t5s_hub (libcurl) on the download lane.
target_link_libraries(t5s_engine_thread PUBLIC t5s_learning t5s_engine t5s_history t5s_trainer t5s_hub Threads::Threads)
# Test hooks (EngineTestAccess::crash_lane, the UI test driver's fill_history) exist only in builds with the
# test suite; packages are built without them (T5S_BUILD_TESTS=OFF, or -DT5S_TEST_HOOKS=OFF).
option(T5S_TEST_HOOKS "Build the test-only hooks into the engine thread and the UI test driver" ${T5S_BUILD_TESTS})
if(T5S_TEST_HOOKS)
  target_sources(t5s_engine_thread PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/engine_thread/test_hooks.cpp)
  target_compile_definitions(t5s_engine_thread PUBLIC T5S_TEST_HOOKS=1)
endif()
