#pragma once
// The C entry point of libt5s_nccl.so (trainer/nccl_module.cpp), shared with its loader.
#include <cstddef>
#include <cstdint>

extern "C" {

struct T5sNcclRequest {
    void* store;  // c10d::Store*: the rendezvous store (the module takes its own reference)
    int rank;
    int world_size;
    int device_index;  // LOCAL_RANK's GPU
    int64_t timeout_ms;
};

// A c10d::Backend* holding one reference (c10::intrusive_ptr<c10d::Backend>::reclaim takes it), or
// nullptr with the reason in `error`.
using T5sNcclCreateBackend = void* (*)(const T5sNcclRequest* request, char* error, size_t error_size);
}
