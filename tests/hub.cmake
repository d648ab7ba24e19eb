# The model store and `t5studio pull` against a local Hub server (tests/hub/hub_server.py), no
# network: the server proven honest with huggingface_hub.snapshot_download, then our pull, resume
# after kill -9 / a dropped connection / Ctrl-C, a corrupted file, 401/404/500/refused/unsupported/
# offline, transformers and sentence-transformers loading our cache, `--model ORG/NAME` and
# `models` on a cache huggingface_hub wrote (pytest files: tests/conftest.py).
# The full-disk case (hub_disk_full, -k disk_full) needs a tmpfs (root): skipped with that reason otherwise.
t5s_add_pytest(hub hub/test_hub_pull.py --t5studio $<TARGET_FILE:t5studio> --work ${CMAKE_CURRENT_BINARY_DIR}/hub_work
               -k "not disk_full")
set_tests_properties(hub PROPERTIES TIMEOUT 600)
t5s_add_pytest(hub_disk_full hub/test_hub_pull.py --t5studio $<TARGET_FILE:t5studio>
               --work ${CMAKE_CURRENT_BINARY_DIR}/hub_disk_work -k disk_full)
# `t5studio pull` against a hostile Hub (tests/hub/hostile_hub_server.py): paths out of the cache,
# non-HTTP redirects, the token sent to another port, oversized and dripping answers, SIGINT/SIGTERM.
# Loopback only; each attack has its own deadline.
t5s_add_pytest(hub_hostile hub/test_hub_hostile.py --t5studio $<TARGET_FILE:t5studio>
               --work ${CMAKE_CURRENT_BINARY_DIR}/hub_hostile_work)
set_tests_properties(hub_hostile PROPERTIES TIMEOUT 300)
