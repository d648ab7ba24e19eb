# One name per libFuzzer target (tests/fuzz/<name>.cpp); shared by the fuzz project and tests/fuzz.cmake.
set(T5S_FUZZ_TARGETS
  fuzz_safetensors
  fuzz_model_config
  fuzz_tokenizer_model
  fuzz_tokenizer_text
  fuzz_dataset
  fuzz_generation_options
  fuzz_export
  fuzz_label_config
  fuzz_http_request
  fuzz_pasted_settings
)
