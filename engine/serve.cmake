# t5s_serve: continuous batching for serving (t5s/scheduler.h) over t5s_engine's network. Torch
# stays PRIVATE: batch_decoder.cpp holds the tensors, the scheduler is plain C++.
add_library(t5s_serve STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/src/serve/batch_cache.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/serve/batch_decoder.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/serve/request_rounds.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/serve/scheduler.cpp
)
target_include_directories(t5s_serve PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
# The options JSON and the named merge are the core's (t5s/generation_fields.h): no history store here.
target_link_libraries(t5s_serve PUBLIC t5s_engine Threads::Threads PRIVATE t5s_torch_cpu)
