# t5s_report: score statistics, bar charts and the PNG encoder (torch-free), for dataset cards,
# run reports and the app's screenshots. Included by engine/CMakeLists.txt.
file(GLOB T5S_REPORT_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/report/*.cpp")
add_library(t5s_report STATIC ${T5S_REPORT_SOURCES})
target_include_directories(t5s_report
  PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}/include"
  PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/src")
target_link_libraries(t5s_report PUBLIC t5s_core)
set_target_properties(t5s_report PROPERTIES POSITION_INDEPENDENT_CODE ON)
