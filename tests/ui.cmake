# UI tests (included by tests/CMakeLists.txt).
#   test_ui_logic      view-models without GL: candidate states, undo/redo, CJK/Latin diff, keymap,
#                      controller flow with a fake engine, script parsing, quality-score view (test_ui_scores.cpp),
#                      the Models window's catalogue / memory fits / download flow (test_ui_models.cpp),
#                      protected spans: settings, protect selection, marks, batch counts (test_ui_spans.cpp),
#                      recipes: picker, editor checked as typed, Save as, routes (test_ui_recipes.cpp)
#   test_engine_thread commands/events on the fake model (and a tiny real model when present),
#                      failures -> JobFailed, submit never blocks, hot swap, pause/resume, restart,
#                      recipes (test_engine_thread_recipes.cpp: same as run_recipe, bad recipe, cancel)
#   ui_e2e_scores      the app with an embedding model: score bars, sort, thresholds moved mid-session,
#                      batch kept / dropped, History's dropped candidates (run_e2e_scores.sh)
#   ui_e2e_decoding    Paste settings (a model card's generate() recipe, a JSON object) and Advanced decoding's boxes
#   ui_e2e_recipes     a shipped recipe picked, candidates with their routes, the recipe editor (run_e2e_recipes.sh)
#   ui_e2e             the real app under Xvfb in test mode: a 20-row file through the keyboard loop,
#                      export checked, a PNG of each panel in ${CMAKE_CURRENT_BINARY_DIR}/ui_screenshots
if(TARGET t5s_ui_logic)
  add_executable(test_ui_logic ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_logic.cpp ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_lora.cpp
                               ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_scores.cpp ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_models.cpp
                               ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_learning.cpp ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_spans.cpp
                               ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_kernels.cpp
                               ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_settings.cpp ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_decoding.cpp
                               ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_ui_recipes.cpp
                               # t5studio's own flags (the desktop app's), read by the CLI's flag machinery
                               ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_desktop_flags.cpp ${CMAKE_SOURCE_DIR}/app/desktop/desktop_flags.cpp
                               ${CMAKE_SOURCE_DIR}/app/common/args.cpp)
  target_link_libraries(test_ui_logic PRIVATE t5s_ui_logic t5s_catch_main CLI11::CLI11)
  target_include_directories(test_ui_logic PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/app)
  target_compile_definitions(test_ui_logic PRIVATE T5S_SOURCE_ROOT="${CMAKE_SOURCE_DIR}")
  add_test(NAME ui_logic COMMAND test_ui_logic "~[may_skip]")
  add_test(NAME ui_settings COMMAND test_ui_logic "[settings]")  # settings.json alone (ctest -R settings)
  add_test(NAME ui_decoding COMMAND test_ui_logic "[decoding]")  # Advanced decoding and Paste settings alone
  add_test(NAME ui_recipes COMMAND test_ui_logic "[recipe]")  # the workspace's recipe picker, editor and routes alone
  add_test(NAME desktop_flags COMMAND test_ui_logic "[desktop_flags]")  # t5studio's own flags alone
  # The CJK glyph checks need a CJK font installed: skipped, with the reason, where there is none.
  t5s_add_skippable_test(ui_logic_cjk_fonts $<TARGET_FILE:test_ui_logic> "[fonts]")
endif()

# fake_model.cpp: a test double with deterministic output that steps like a decoder (test-only).
add_executable(test_engine_thread ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_engine_thread.cpp ${CMAKE_CURRENT_SOURCE_DIR}/ui/fake_model.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_engine_thread_scores.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_engine_thread_learning.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_engine_thread_spans.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_engine_thread_recipes.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/ui/test_recipe_step_models.cpp)
target_link_libraries(test_engine_thread PRIVATE t5s_engine_thread t5s_catch_main)
target_include_directories(test_engine_thread PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../engine/src)
add_test(NAME engine_thread COMMAND test_engine_thread)
set_tests_properties(engine_thread PROPERTIES TIMEOUT 300)
# A recipe's step models alone (t5s/recipe_step_models.h, on the fake model; also part of engine_thread).
add_test(NAME recipe_step_models COMMAND test_engine_thread "[step_models]")
if(NOT T5S_TEST_HOOKS)
  message(STATUS "engine_thread: the dead-lane/restart case is left out (T5S_TEST_HOOKS=OFF)")
endif()

# The GUI alone (t5s_run_gui without the CLI): the e2e test uses t5studio itself when
# T5S_E2E_USE_T5STUDIO=ON, else this (same code path, fewer dependencies).
if(TARGET t5s_ui)
  add_executable(t5studio_gui ${CMAKE_CURRENT_SOURCE_DIR}/ui/gui_main.cpp ${CMAKE_SOURCE_DIR}/app/desktop/desktop_main.cpp
                              ${CMAKE_SOURCE_DIR}/app/desktop/desktop_flags.cpp ${CMAKE_SOURCE_DIR}/app/common/args.cpp)
  target_link_libraries(t5studio_gui PRIVATE t5s_ui CLI11::CLI11)
  target_include_directories(t5studio_gui PRIVATE ${CMAKE_SOURCE_DIR}/app)
endif()
option(T5S_E2E_USE_T5STUDIO "Run the UI end-to-end test on the t5studio binary" ON)
find_program(T5S_XVFB_RUN xvfb-run)
set(T5S_E2E_APP "")
if(T5S_E2E_USE_T5STUDIO AND TARGET t5studio)
  set(T5S_E2E_APP t5studio)
elseif(TARGET t5studio_gui)
  set(T5S_E2E_APP t5studio_gui)
endif()
if(T5S_XVFB_RUN AND T5S_E2E_APP AND TARGET t5s_ui)
  add_test(NAME ui_e2e
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ui/run_e2e.sh $<TARGET_FILE:${T5S_E2E_APP}>
                   ${CMAKE_CURRENT_SOURCE_DIR}/ui ${CMAKE_CURRENT_SOURCE_DIR}/data/models/t5v10-tied-relu
                   ${CMAKE_CURRENT_BINARY_DIR}/ui_e2e)
  set_tests_properties(ui_e2e PROPERTIES TIMEOUT 600 LABELS "gui;slow")
  # Damaged / foreign history, truncated model, broken JSONL: a message on screen, the app stays up.
  add_test(NAME ui_e2e_files
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ui/run_e2e_files.sh $<TARGET_FILE:${T5S_E2E_APP}>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/models/t5v10-tied-relu ${CMAKE_CURRENT_BINARY_DIR}/ui_e2e_files)
  set_tests_properties(ui_e2e_files PROPERTIES TIMEOUT 600 LABELS "gui")
  # Quality scores: embedder loaded, bars / sort / a threshold moved mid-session, batch kept / dropped, History's dropped.
  # On the bundled demo model: real paraphrases, whose scores differ (the tiny random model's "???" outputs often tie).
  add_test(NAME ui_e2e_scores
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ui/run_e2e_scores.sh $<TARGET_FILE:${T5S_E2E_APP}>
                   ${CMAKE_CURRENT_SOURCE_DIR}/ui ${CMAKE_SOURCE_DIR}/assets/demo-model
                   ${CMAKE_CURRENT_BINARY_DIR}/ui_e2e_scores)
  set_tests_properties(ui_e2e_scores PROPERTIES TIMEOUT 600 LABELS "gui")
  # The learning loop: decisions in the workspace, the switch, three rounds, the Learning window.
  add_test(NAME ui_e2e_learning
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ui/run_e2e_learning.sh $<TARGET_FILE:${T5S_E2E_APP}>
                   ${CMAKE_CURRENT_SOURCE_DIR}/ui ${CMAKE_SOURCE_DIR}/assets/demo-model
                   ${CMAKE_CURRENT_BINARY_DIR}/ui_e2e_learning)
  set_tests_properties(ui_e2e_learning PROPERTIES TIMEOUT 900 LABELS "gui;learning")
  # Protected spans: a mark by Ctrl+P, detectors, candidates keeping every span, a forced
  # mark, a labelled JSONL batch with per-row counts, the export's spans; screenshots.
  add_test(NAME ui_e2e_spans
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ui/run_e2e_spans.sh $<TARGET_FILE:${T5S_E2E_APP}>
                   ${CMAKE_CURRENT_SOURCE_DIR}/ui ${CMAKE_SOURCE_DIR}/assets/demo-model
                   ${CMAKE_CURRENT_BINARY_DIR}/ui_e2e_spans)
  set_tests_properties(ui_e2e_spans PROPERTIES TIMEOUT 600 LABELS "gui;spans")
  # Paste settings (the humarin card's generate() recipe, a JSON object) and Advanced decoding's list boxes.
  add_test(NAME ui_e2e_decoding
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ui/run_e2e_decoding.sh $<TARGET_FILE:${T5S_E2E_APP}>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/models/t5v10-tied-relu ${CMAKE_CURRENT_BINARY_DIR}/ui_e2e_decoding)
  set_tests_properties(ui_e2e_decoding PROPERTIES TIMEOUT 600 LABELS "gui")
  # Recipes: the shipped en-zh-en recipe picked, candidates with their routes, the editor's one-line refusal, Save as, run from the file.
  add_test(NAME ui_e2e_recipes
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ui/run_e2e_recipes.sh $<TARGET_FILE:${T5S_E2E_APP}>
                   ${CMAKE_CURRENT_SOURCE_DIR}/ui ${CMAKE_SOURCE_DIR}/assets/demo-model
                   ${CMAKE_CURRENT_BINARY_DIR}/ui_e2e_recipes)
  set_tests_properties(ui_e2e_recipes PROPERTIES TIMEOUT 600 LABELS "gui;recipes")
endif()
