# Contract goldens (included by tests/CMakeLists.txt): every --help, every --json shape, the files
# generate/export/train write, the history's schema and stored settings JSON, serve's HTTP answers
# and the app's settings.json, each compared with its golden in tests/contracts/golden/
# (docs/contracts.md). Rewrite them, for a deliberate extension only:
#   T5S_UPDATE_GOLDENS=1 ctest -R '^contracts_'
# The app group needs xvfb-run; without it that entry is a ctest skip, with the reason.
foreach(group cli pull serve app)
  t5s_add_skippable_test(contracts_${group} ${T5S_SIZE_GATE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/contracts/run_contracts.py
                         ${group} $<TARGET_FILE:t5studio> ${CMAKE_CURRENT_BINARY_DIR}/contracts_${group}_work)
  set_tests_properties(contracts_${group} PROPERTIES TIMEOUT 180 LABELS contracts)
endforeach()
