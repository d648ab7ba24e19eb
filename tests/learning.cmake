# The learning loop: engine rounds on the tiny model (adoption, rejection, crash, cancel,
# restore, versions in the history), the `learn` CLI contract, and Label Studio end to end.
add_executable(test_learning test_learning.cpp)
target_link_libraries(test_learning PRIVATE t5s_engine t5s_learning t5s_history t5s_catch_main)
target_include_directories(test_learning PRIVATE ${CMAKE_SOURCE_DIR}/engine/src)
add_test(NAME learning COMMAND test_learning)
set_tests_properties(learning PROPERTIES TIMEOUT 600 LABELS learning)

# Label Studio end to end: a real Label Studio (PyPI, in .venv-ls made by the test itself) with
# `t5studio serve` as its ML backend. `ctest -L labelstudio` runs it alone; SKIPPED (77) only when
# label-studio cannot be installed. Needs ../shared JGLUE JSTS (the annotations).
add_test(NAME labelstudio_e2e COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/labelstudio/run_in_ls_venv.sh test_labelstudio_e2e.py --t5studio $<TARGET_FILE:t5studio>
         --model ${CMAKE_SOURCE_DIR}/assets/demo-model --data ${T5S_SHARED_DIR}/data/jglue-jsts/valid.jsonl
         --work ${CMAKE_CURRENT_BINARY_DIR}/labelstudio_work)
# Both make or reuse .venv-ls (setup_venv.sh): never at the same time, or one sees a half-made venv.
set_tests_properties(labelstudio_e2e PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1800 LABELS labelstudio RESOURCE_LOCK labelstudio_venv)
# serve --labelstudio-recipe: a real Label Studio's predictions are generate --recipe's candidates, routes kept.
add_test(NAME labelstudio_recipes COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/labelstudio/run_in_ls_venv.sh test_labelstudio_recipes.py
         --t5studio $<TARGET_FILE:t5studio> --model ${CMAKE_SOURCE_DIR}/assets/demo-model
         --data ${CMAKE_SOURCE_DIR}/assets/recipes/demo-back-translation-zh.json --work ${CMAKE_CURRENT_BINARY_DIR}/labelstudio_recipes_work)
set_tests_properties(labelstudio_recipes PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS labelstudio RESOURCE_LOCK labelstudio_venv)
# Our Label Studio exports (generate --output-format labelstudio, export --format labelstudio) imported
# into a real Label Studio with a NER config: every stored span's text is where its offsets say.
add_test(NAME labelstudio_spans COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/labelstudio/run_in_ls_venv.sh test_labelstudio_spans.py --t5studio $<TARGET_FILE:t5studio>
         --model ${T5S_TEST_DATA}/models/t5v10-tied-relu --work ${CMAKE_CURRENT_BINARY_DIR}/labelstudio_spans_work)
set_tests_properties(labelstudio_spans PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200 LABELS labelstudio RESOURCE_LOCK labelstudio_venv)

t5s_add_cli_test(cli_learn test_learn.sh)
set_tests_properties(cli_learn PROPERTIES TIMEOUT 600 LABELS learning)

# The ML-backend protocol without Label Studio (tiny model): shapes, config errors, auth, webhooks
# as pairs, a round every --learn-every pairs, model_version, versions in the served history.
t5s_add_pytest(serve_labelstudio_protocol serve/test_ls_protocol.py --t5studio $<TARGET_FILE:t5studio>
               --model ${T5S_TEST_DATA}/models/t5v10-tied-relu --work ${CMAKE_CURRENT_BINARY_DIR}/serve_ls_protocol_work)
set_tests_properties(serve_labelstudio_protocol PROPERTIES TIMEOUT 600 LABELS learning)
