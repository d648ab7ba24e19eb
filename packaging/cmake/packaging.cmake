# Version header and install() rules (included by the top-level CMakeLists.txt).
#
# `cmake --install build --component t5studio`       the app: bin/t5studio, LibTorch's CPU libraries
#                                                       in lib/t5studio, the demo model, desktop files
# `cmake --install build --component t5studio-cuda`  libtorch_cuda and the CUDA libraries it loads
# packaging/deb.sh turns the two into Debian packages. The build tree keeps its own RPATH (the
# venv's LibTorch); installed, the binary finds its libraries through $ORIGIN/../lib/t5studio.

# One version: project(VERSION) -> t5s/version.h (--version), the packages, the metainfo.
set(T5S_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated")
configure_file("${CMAKE_CURRENT_LIST_DIR}/version.h.in" "${T5S_GENERATED_DIR}/t5s/version.h" @ONLY)
string(TIMESTAMP T5S_RELEASE_DATE "%Y-%m-%d" UTC)
set(T5S_APP_ID "org.t5studio.T5Studio")
configure_file("${CMAKE_CURRENT_LIST_DIR}/../desktop/${T5S_APP_ID}.metainfo.xml.in"
               "${T5S_GENERATED_DIR}/${T5S_APP_ID}.metainfo.xml" @ONLY)
if(NOT TARGET t5studio)
  return()
endif()
target_include_directories(t5studio PRIVATE "${T5S_GENERATED_DIR}")

set(T5S_PRIVATE_LIB_DIR "lib/t5studio")
set_target_properties(t5studio PROPERTIES INSTALL_RPATH "$ORIGIN/../${T5S_PRIVATE_LIB_DIR}")
install(TARGETS t5studio RUNTIME DESTINATION bin COMPONENT t5studio)

# LibTorch's libraries come from the wheel (or the LibTorch folder) the build used. A LibTorch that
# the system itself provides (/usr) is a dependency, not something to copy.
get_filename_component(T5S_TORCH_ROOT "${TORCH_INSTALL_PREFIX}/.." ABSOLUTE)
if(TORCH_INSTALL_PREFIX MATCHES "^/usr(/|$)")
  set(T5S_BUNDLE_TORCH OFF)
else()
  set(T5S_BUNDLE_TORCH ON)
endif()
set(T5S_LIB_INSTALL_ARGS
  "set(T5S_BUNDLE_TORCH ${T5S_BUNDLE_TORCH})
   set(T5S_TORCH_ROOT \"${T5S_TORCH_ROOT}\")
   set(T5S_TORCH_LIB_DIR \"${TORCH_INSTALL_PREFIX}/lib\")
   set(T5S_EXECUTABLE \"$<TARGET_FILE:t5studio>\")
   set(T5S_LIB_DESTINATION \"${T5S_PRIVATE_LIB_DIR}\")")
install(CODE "${T5S_LIB_INSTALL_ARGS}
  set(T5S_PART cpu)
  include(\"${CMAKE_CURRENT_LIST_DIR}/install_torch_libs.cmake\")" COMPONENT t5studio)
install(CODE "${T5S_LIB_INSTALL_ARGS}
  set(T5S_PART cuda)
  include(\"${CMAKE_CURRENT_LIST_DIR}/install_torch_libs.cmake\")" COMPONENT t5studio-cuda)
# After CMake's own RPATH edit: exactly $ORIGIN/../lib/t5studio (a link-time -rpath from the engine's
# interface would otherwise survive next to it and point into the build machine's venv).
install(CODE "file(RPATH_SET FILE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/t5studio\"
                         NEW_RPATH \"\\\$ORIGIN/../${T5S_PRIVATE_LIB_DIR}\")" COMPONENT t5studio)

# Data and desktop integration.
install(DIRECTORY "${CMAKE_SOURCE_DIR}/assets/demo-model/" DESTINATION share/t5studio/demo-model COMPONENT t5studio)
install(FILES "${CMAKE_SOURCE_DIR}/assets/model_catalogue.json" DESTINATION share/t5studio COMPONENT t5studio)
install(DIRECTORY "${CMAKE_SOURCE_DIR}/assets/recipes/" DESTINATION share/t5studio/recipes COMPONENT t5studio FILES_MATCHING PATTERN "*.json")
set(T5S_DESKTOP_DIR "${CMAKE_CURRENT_LIST_DIR}/../desktop")
install(FILES "${T5S_DESKTOP_DIR}/${T5S_APP_ID}.desktop" DESTINATION share/applications COMPONENT t5studio)
install(FILES "${T5S_GENERATED_DIR}/${T5S_APP_ID}.metainfo.xml" DESTINATION share/metainfo COMPONENT t5studio)
install(FILES "${T5S_DESKTOP_DIR}/t5studio.svg" DESTINATION share/icons/hicolor/scalable/apps COMPONENT t5studio)
