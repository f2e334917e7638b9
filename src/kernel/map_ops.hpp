// The bpf() calls on held fds that the kernel layer's users make (map elements, batches, a
// program's test run, an iterator's read fd), each returning a positive errno (0: done), so that
// nobody else includes libbpf's bpf.h (tests/unit/daemon_layering_check.py, rule 3).
#pragma once

#include <cstdint>

#include "kernel/unique_fd.hpp"

namespace c2c::kernel {

int map_lookup(int fd, const void* key, void* value);
int map_update(int fd, const void* key, const void* value);  // BPF_ANY: create or replace
int map_delete(int fd, const void* key);
// The key after *prev (prev nullptr: the first); ENOENT past the last.
int map_next_key(int fd, const void* prev, void* next);

// Batches: *count in is how many, out how many were done (also on error).
int map_update_batch(int fd, const void* keys, const void* values, uint32_t* count);
int map_delete_batch(int fd, const void* keys, uint32_t* count);
// in: the batch cursor (nullptr: from the start), out: the next cursor; ENOENT at the end.
int map_lookup_batch(int fd, const void* in, void* out, void* keys, void* values, uint32_t* count);

// Runs a program once (BPF_PROG_TEST_RUN) with ctx as its context; *retval its return value.
int prog_test_run(int prog_fd, void* ctx, uint32_t ctx_size, uint32_t* retval);

// A new read fd of an iterator link (bpf_iter_create): each read() walks the iterator again.
int iter_open(int link_fd, UniqueFd* out);

}  // namespace c2c::kernel
