# The engine sources the fuzz targets exercise (torch-free), for the libFuzzer build
# (tests/fuzz/CMakeLists.txt) and the replay build (tests/fuzz.cmake). Needs T5S_ROOT.
file(GLOB T5S_FUZZ_HISTORY_SOURCES "${T5S_ROOT}/engine/src/history/*.cpp")
# The history exports dataset cards, which draw their plots with the report library.
file(GLOB T5S_FUZZ_REPORT_SOURCES "${T5S_ROOT}/engine/src/report/*.cpp")
set(T5S_FUZZ_ENGINE_SOURCES
  ${T5S_ROOT}/engine/src/base/error.cpp
  ${T5S_ROOT}/engine/src/base/enum_names.cpp
  ${T5S_ROOT}/engine/src/base/json_text.cpp
  ${T5S_ROOT}/engine/src/base/utc_time.cpp
  ${T5S_ROOT}/engine/src/checkpoint/model_config.cpp
  ${T5S_ROOT}/engine/src/text/tokenizer.cpp
  ${T5S_ROOT}/engine/src/text/tokenizer_from_json.cpp
  ${T5S_ROOT}/engine/src/text/tokenizer_json.cpp
  ${T5S_ROOT}/engine/src/text/tokenizer_json_spiece.cpp
  ${T5S_ROOT}/engine/src/text/json_unigram.cpp
  ${T5S_ROOT}/engine/src/text/precompiled_normalizer.cpp
  ${T5S_ROOT}/engine/src/text/spiece_validate.cpp
  ${T5S_ROOT}/engine/src/text/text_offsets.cpp
  ${T5S_ROOT}/engine/src/input/source_text.cpp
  ${T5S_ROOT}/engine/src/input/delimited_text.cpp
  ${T5S_ROOT}/engine/src/checkpoint/safetensors.cpp
  ${T5S_ROOT}/engine/src/options/generation_options.cpp
  ${T5S_ROOT}/engine/src/options/generation_fields.cpp
  ${T5S_ROOT}/engine/src/options/field_values.cpp
  ${T5S_ROOT}/engine/src/options/settings_fields.cpp
  ${T5S_ROOT}/engine/src/options/help_defaults.cpp
  ${T5S_ROOT}/engine/src/quality/drop_reason.cpp
  ${T5S_ROOT}/engine/src/options/generation_limits.cpp
  ${T5S_ROOT}/engine/src/options/generation_config.cpp
  ${T5S_ROOT}/engine/src/options/python_call_text.cpp
  ${T5S_ROOT}/engine/src/options/pasted_settings.cpp
  ${T5S_ROOT}/engine/src/text/text_normalize.cpp
  ${T5S_ROOT}/engine/src/base/atomic_file.cpp
  ${T5S_ROOT}/engine/src/base/file_io.cpp
  # The history names a recipe by its file's SHA-256.
  ${T5S_ROOT}/engine/src/hub/sha256.cpp
  ${T5S_ROOT}/engine/src/engine_thread/dataset_reader.cpp
  ${T5S_ROOT}/engine/src/quality/minhash.cpp
  ${T5S_ROOT}/engine/src/quality/chrf.cpp
  ${T5S_ROOT}/engine/src/spans/span_detect.cpp
  ${T5S_ROOT}/engine/src/spans/span_plan.cpp
  ${T5S_ROOT}/engine/src/spans/span_restore.cpp
  ${T5S_ROOT}/engine/src/spans/sentinel_guard.cpp
  ${T5S_ROOT}/engine/src/spans/span_json.cpp
  # The history stores a route as route_to_json builds it (t5s/route_json.h).
  ${T5S_ROOT}/engine/src/recipes/route_json.cpp
  ${T5S_ROOT}/engine/src/input/input_format.cpp
  ${T5S_ROOT}/engine/src/input/input_columns.cpp
  ${T5S_ROOT}/engine/src/input/input_reader.cpp
  ${T5S_ROOT}/engine/src/input/row_fields.cpp
  ${T5S_ROOT}/engine/src/input/line_sources.cpp
  ${T5S_ROOT}/engine/src/input/delimited_source.cpp
  ${T5S_ROOT}/engine/src/input/labelstudio_source.cpp
  ${T5S_ROOT}/engine/src/input/output_writer.cpp
  ${T5S_ROOT}/engine/src/text/embed_common.cpp
  ${T5S_ROOT}/engine/src/text/unicode_text.cpp
  ${T5S_ROOT}/engine/src/text/unicode_tables_case.cpp
  ${T5S_ROOT}/engine/src/text/unicode_tables_norm.cpp
  ${T5S_FUZZ_HISTORY_SOURCES}
  ${T5S_FUZZ_REPORT_SOURCES}
  # serve's request parsers (torch- and httplib-free; include folder ${T5S_ROOT}/app)
  ${T5S_ROOT}/app/serve/label_config.cpp
  ${T5S_ROOT}/app/serve/bounded_json.cpp
  ${T5S_ROOT}/app/serve/request_json.cpp
  ${T5S_ROOT}/app/common/json_output.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/targets.cmake)
