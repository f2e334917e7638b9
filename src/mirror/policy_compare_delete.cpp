#include "mirror/policy_compare_delete.hpp"

#include <bpf/libbpf.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernel/errno_text.hpp"
#include "kernel/map_ops.hpp"

namespace c2c::mirror {

using kernel::errno_text;

Result<std::unique_ptr<PolicyCompareDelete>> PolicyCompareDelete::load(const std::string& object_path,
                                                                      int policy_fd) {
  using R = Result<std::unique_ptr<PolicyCompareDelete>>;
  std::unique_ptr<PolicyCompareDelete> p(new PolicyCompareDelete());
  const std::string what = "compare-and-delete program of " + object_path;
  std::string err;
  p->obj_ = kernel::BpfObject::open(object_path, &err);
  if (!p->obj_) return R::fail(what + ": " + err);
  // Only the program and its .bss are made: the policy map is the pinned one, the other maps of
  // the object are not touched.
  bpf_map* map = nullptr;
  bpf_object__for_each_map(map, p->obj_.get()) {
    if (bpf_map__is_internal(map)) continue;
    const int rc = std::strcmp(bpf_map__name(map), C2C_POLICY_MAP_NAME) == 0 ? bpf_map__reuse_fd(map, policy_fd)
                                                                             : bpf_map__set_autocreate(map, false);
    if (rc != 0) return R::fail(what + ": cannot prepare map " + bpf_map__name(map) + ": " + errno_text(rc));
  }
  if (std::string e = p->obj_.load(); !e.empty())
    return R::fail(what + ": " + e +
                   " (needs CAP_BPF and a kernel with syscall programs and bpf_loop, 5.17 or later)");
  bpf_program* prog = bpf_object__find_program_by_name(p->obj_.get(), "c2c_compare_delete");
  bpf_map* bss = bpf_object__find_map_by_name(p->obj_.get(), ".bss");
  if (prog == nullptr || bss == nullptr) return R::fail(what + ": has no program c2c_compare_delete or no .bss");
  p->prog_fd_ = bpf_program__fd(prog);
  // libbpf 1.4 maps an object's .bss into the process only for skeletons: map it here, shared
  // with the kernel (the map was created BPF_F_MMAPABLE).
  bpf_map__initial_value(bss, &p->shared_bytes_);
  if (p->shared_bytes_ < sizeof(c2c_compare_delete_slot) * C2C_COMPARE_DELETE_SLOTS)
    return R::fail(what + ": its .bss holds " + std::to_string(p->shared_bytes_) + " bytes, fewer than the slots");
  void* m = ::mmap(nullptr, p->shared_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(bss), 0);
  if (m == MAP_FAILED) return R::fail(what + ": cannot map its .bss: " + errno_text(errno));
  p->shared_ = static_cast<c2c_compare_delete_slot*>(m);
  return R::ok(std::move(p));
}

PolicyCompareDelete::~PolicyCompareDelete() {
  if (shared_ != nullptr) ::munmap(shared_, shared_bytes_);
}  // obj_ closes after the .bss is unmapped

BatchResult PolicyCompareDelete::run(c2c_compare_delete_slot* slots, size_t n) {
  size_t done = 0;
  while (done < n) {
    const size_t k = std::min<size_t>(n - done, C2C_COMPARE_DELETE_SLOTS);
    std::memcpy(shared_, slots + done, k * sizeof *slots);
    c2c_compare_delete_args args{static_cast<__u32>(k), 0};
    uint32_t retval = 0;
    if (const int e = kernel::prog_test_run(prog_fd_, &args, sizeof args, &retval); e != 0) return {e, done};
    // The program returns how many slots it went through (bpf_loop's count), or -1 for a count
    // above the slots: anything but k means the verdicts cannot be trusted.
    if (retval != k) return {EIO, done};
    std::memcpy(slots + done, shared_, k * sizeof *slots);
    done += k;
  }
  return {0, done};
}

}  // namespace c2c::mirror
