# t5s_history: the SQLite history store and export (torch-free). Included by engine/CMakeLists.txt.
file(GLOB T5S_HISTORY_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/history/*.cpp")
add_library(t5s_history STATIC ${T5S_HISTORY_SOURCES})
target_include_directories(t5s_history
  PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}/include"
  PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/src")
target_link_libraries(t5s_history PUBLIC t5s_core t5s_report SQLite::SQLite3)
set_target_properties(t5s_history PROPERTIES POSITION_INDEPENDENT_CODE ON)
