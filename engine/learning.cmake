# t5s_learning: the learning loop (t5s/learning.h) and the training record (t5s/training_record.h),
# torch-free over t5s_engine, t5s_history and t5s_trainer. Its own library so that `serve` and `learn`
# link it without the desktop's engine thread (which links it for its learning jobs).
add_library(t5s_learning STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/src/learning/learning_round.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/learning/learning_versions.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/src/learning/training_record.cpp
)
target_include_directories(t5s_learning PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                                        PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(t5s_learning PUBLIC t5s_engine t5s_history t5s_trainer)
