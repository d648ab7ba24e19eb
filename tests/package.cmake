# The Debian packages (included by tests/CMakeLists.txt): packaging/deb.sh builds them from this
# build, tests/package/test_package.sh checks their metadata and file lists and runs the app from a
# throwaway root (CLI, GUI under Xvfb, with and without t5studio-cuda). Needs the GUI build (the
# installed app is the desktop app) and a LibTorch with CUDA (for t5studio-cuda).
if(TARGET t5studio AND TARGET t5s_ui AND T5S_WITH_CUDA)
  add_test(NAME package
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/package/test_package.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/package_work)
  # RUN_SERIAL: it copies ~3.5 GB of LibTorch/CUDA libraries; running beside other tests only slows both.
  set_tests_properties(package PROPERTIES LABELS "package;slow" TIMEOUT 1200 SKIP_RETURN_CODE 77 RUN_SERIAL ON)
endif()
