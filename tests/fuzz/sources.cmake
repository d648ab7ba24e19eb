# The engine sources the fuzz targets exercise (torch-free), for the libFuzzer build
# (tests/fuzz/CMakeLists.txt) and the replay build (tests/fuzz.cmake). Needs T5S_ROOT.
file(GLOB T5S_FUZZ_HISTORY_SOURCES "${T5S_ROOT}/engine/src/history/*.cpp")
set(T5S_FUZZ_ENGINE_SOURCES
  ${T5S_ROOT}/engine/src/error.cpp
  ${T5S_ROOT}/engine/src/enum_names.cpp
  ${T5S_ROOT}/engine/src/json_text.cpp
  ${T5S_ROOT}/engine/src/model_config.cpp
  ${T5S_ROOT}/engine/src/tokenizer.cpp
  ${T5S_ROOT}/engine/src/tokenizer_from_json.cpp
  ${T5S_ROOT}/engine/src/tokenizer_json.cpp
  ${T5S_ROOT}/engine/src/tokenizer_json_spiece.cpp
  ${T5S_ROOT}/engine/src/json_unigram.cpp
  ${T5S_ROOT}/engine/src/precompiled_normalizer.cpp
  ${T5S_ROOT}/engine/src/spiece_validate.cpp
  ${T5S_ROOT}/engine/src/utf8.cpp
  ${T5S_ROOT}/engine/src/delimited_text.cpp
  ${T5S_ROOT}/engine/src/safetensors.cpp
  ${T5S_ROOT}/engine/src/generation_options.cpp
  ${T5S_ROOT}/engine/src/generation_fields.cpp
  ${T5S_ROOT}/engine/src/generation_limits.cpp
  ${T5S_ROOT}/engine/src/generation_config.cpp
  ${T5S_ROOT}/engine/src/text_normalize.cpp
  ${T5S_ROOT}/engine/src/atomic_file.cpp
  ${T5S_ROOT}/engine/src/file_io.cpp
  ${T5S_ROOT}/engine/src/engine_thread/dataset_reader.cpp
  ${T5S_ROOT}/engine/src/quality/minhash.cpp
  ${T5S_ROOT}/engine/src/quality/chrf.cpp
  ${T5S_ROOT}/engine/src/spans/span_detect.cpp
  ${T5S_ROOT}/engine/src/spans/span_plan.cpp
  ${T5S_ROOT}/engine/src/spans/span_restore.cpp
  ${T5S_ROOT}/engine/src/spans/sentinel_guard.cpp
  ${T5S_ROOT}/engine/src/embed/embed_common.cpp
  ${T5S_ROOT}/engine/src/embed/unicode_text.cpp
  ${T5S_ROOT}/engine/src/embed/unicode_tables_case.cpp
  ${T5S_ROOT}/engine/src/embed/unicode_tables_norm.cpp
  ${T5S_FUZZ_HISTORY_SOURCES})
include(${CMAKE_CURRENT_LIST_DIR}/targets.cmake)
