# Included after hub.cmake (it needs T5S_SIZE_GATE_PYTHON, the test venv's Python, and T5S_E2E_APP from ui.cmake).
# Models window: a download from the local Hub server (tests/hub/hub_server.py) through the window
# (progress, cancel, resume), the model in the Local tab, opened; screenshots in ui_e2e_models/screenshots.
# Skipped, with the reason, where xvfb-run is missing.
if(T5S_E2E_APP AND TARGET t5s_ui)
  t5s_add_pytest(ui_e2e_models ui/run_e2e_models.py --t5studio $<TARGET_FILE:${T5S_E2E_APP}>
                 --model ${CMAKE_CURRENT_SOURCE_DIR}/data/models/t5v10-tied-relu --work ${CMAKE_CURRENT_BINARY_DIR}/ui_e2e_models)
  set_tests_properties(ui_e2e_models PROPERTIES TIMEOUT 600 LABELS "gui")
endif()
