#include "kernel/map_ops.hpp"

#include <bpf/bpf.h>

#include <cerrno>

namespace c2c::kernel {

namespace {
// libbpf returns -errno (and sets errno); the layer's users speak positive errno.
int err_of(int rc) { return rc < 0 ? -rc : 0; }
}  // namespace

int map_lookup(int fd, const void* key, void* value) { return err_of(bpf_map_lookup_elem(fd, key, value)); }

int map_update(int fd, const void* key, const void* value) {
  return err_of(bpf_map_update_elem(fd, key, value, BPF_ANY));
}

int map_delete(int fd, const void* key) { return err_of(bpf_map_delete_elem(fd, key)); }

int map_next_key(int fd, const void* prev, void* next) { return err_of(bpf_map_get_next_key(fd, prev, next)); }

int map_update_batch(int fd, const void* keys, const void* values, uint32_t* count) {
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  return err_of(bpf_map_update_batch(fd, keys, values, count, &opts));
}

int map_delete_batch(int fd, const void* keys, uint32_t* count) {
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  return err_of(bpf_map_delete_batch(fd, keys, count, &opts));
}

int map_lookup_batch(int fd, const void* in, void* out, void* keys, void* values, uint32_t* count) {
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  // The kernel reads `in` only; libbpf's prototype is not const-correct.
  return err_of(bpf_map_lookup_batch(fd, const_cast<void*>(in), out, keys, values, count, &opts));
}

int prog_test_run(int prog_fd, void* ctx, uint32_t ctx_size, uint32_t* retval) {
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx, .ctx_size_in = ctx_size);
  if (const int rc = bpf_prog_test_run_opts(prog_fd, &opts); rc != 0) return rc < 0 ? -rc : EIO;
  *retval = opts.retval;
  return 0;
}

int iter_open(int link_fd, UniqueFd* out) {
  const int fd = bpf_iter_create(link_fd);
  if (fd < 0) return errno;
  *out = UniqueFd(fd);
  return 0;
}

}  // namespace c2c::kernel
