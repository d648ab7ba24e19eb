# Trainer tests: data loading and report, schedules, optimizer parity with transformers,
# gradient checkpointing, bf16 autocast, checkpoints that transformers loads, kill -9 + --resume.
add_executable(test_trainer
  trainer/test_data.cpp
  trainer/test_optim.cpp
  trainer/test_block_cache.cpp
  trainer/test_training.cpp
  trainer/test_checkpoints.cpp
  trainer/test_run_folder.cpp
  trainer/test_lora_training.cpp
  trainer/test_lora_base.cpp
)
target_link_libraries(test_trainer PRIVATE t5s_trainer t5s_engine t5s_catch_main t5s_torch_cpu)
target_include_directories(test_trainer PRIVATE ${CMAKE_SOURCE_DIR}/engine/src ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(test_trainer PRIVATE ${TORCH_CXX_FLAGS})
target_compile_definitions(test_trainer PRIVATE
  T5S_CLI_BIN="$<TARGET_FILE:t5studio>"
  T5S_TRAINER_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/trainer"
  T5S_TRAINER_WORK="${CMAKE_CURRENT_BINARY_DIR}/trainer_work")
add_dependencies(test_trainer t5studio)
target_precompile_headers(test_trainer PRIVATE <ATen/ATen.h>)
add_test(NAME trainer COMMAND test_trainer)
set_tests_properties(trainer PROPERTIES FIXTURES_SETUP trainer_exports TIMEOUT 900)

# transformers (from the project venv) loads the checkpoints test_trainer exported, with no
# missing/unexpected keys, and its logits match T5 Studio's within 1e-5. Skips (code 77) without the venv.
add_test(NAME trainer_hf_load
  COMMAND bash -c "if [ ! -x '${CMAKE_SOURCE_DIR}/.venv/bin/python' ]; then echo 'SKIP: no .venv'; exit 77; fi; \
    exec '${CMAKE_SOURCE_DIR}/.venv/bin/python' -m pytest -q '${CMAKE_CURRENT_SOURCE_DIR}/trainer/check_hf_load.py' \
    --data '${CMAKE_CURRENT_BINARY_DIR}/trainer_work/exports'")
set_tests_properties(trainer_hf_load PROPERTIES FIXTURES_REQUIRED trainer_exports SKIP_RETURN_CODE 77 TIMEOUT 300)

# peft (from the project venv) loads the adapter test_trainer's LoRA run wrote, with logits within
# 1e-5 of T5 Studio's; its merged checkpoint equals PEFT's merge_and_unload and loads in transformers.
add_test(NAME trainer_lora_peft
  COMMAND bash -c "if [ ! -x '${CMAKE_SOURCE_DIR}/.venv/bin/python' ]; then echo 'SKIP: no .venv'; exit 77; fi; \
    exec '${CMAKE_SOURCE_DIR}/.venv/bin/python' -m pytest -q '${CMAKE_CURRENT_SOURCE_DIR}/trainer/check_lora_peft.py' \
    --data '${CMAKE_CURRENT_BINARY_DIR}/trainer_work/lora_exports/lora-run.json'")
set_tests_properties(trainer_lora_peft PROPERTIES FIXTURES_REQUIRED trainer_exports SKIP_RETURN_CODE 77 TIMEOUT 300)

# Scale-out: sharded generate + merge, and data-parallel training over c10d/Gloo on
# 127.0.0.1 with ephemeral ports. Shell drivers around the CLI; each a few seconds.
set(T5S_SCALE_MODEL ${CMAKE_CURRENT_SOURCE_DIR}/data/models/t5v10-tied-relu)
add_test(NAME scale_shard_merge COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scale/test_shard.sh $<TARGET_FILE:t5studio>
         ${T5S_SCALE_MODEL} ${CMAKE_CURRENT_BINARY_DIR}/scale_shard_work)
foreach(mode gloo dropout torchrun kill)
  add_test(NAME scale_ddp_${mode} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scale/test_ddp.sh ${mode} $<TARGET_FILE:t5studio>
           ${T5S_SCALE_MODEL} ${CMAKE_CURRENT_BINARY_DIR}/scale_ddp_${mode}_work ${CMAKE_SOURCE_DIR}/.venv/bin/torchrun)
  set_tests_properties(scale_ddp_${mode} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
set_tests_properties(scale_shard_merge PROPERTIES TIMEOUT 300)
add_test(NAME scale_stream_input COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scale/test_stream.sh $<TARGET_FILE:t5studio>
         ${T5S_SCALE_MODEL} ${CMAKE_CURRENT_BINARY_DIR}/scale_stream_work)
set_tests_properties(scale_stream_input PROPERTIES TIMEOUT 300)
