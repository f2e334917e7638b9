// Owners of libbpf's objects: an opened BPF object file and a link. The kernel layer is the only
// code that opens, loads and closes an object or destroys a link (tests/unit/daemon_layering_check.py,
// rule 3); its users prepare the object between open and load with libbpf's object API
// (bpf_object__find_map_by_name, bpf_map__set_max_entries, ...) through get().
#pragma once

#include <string>

struct bpf_object;
struct bpf_link;

namespace c2c::kernel {

class BpfObject {
 public:
  // Opens the ELF file at path (nothing is created in the kernel yet). On failure the result is
  // empty and *err says "cannot open BPF object <path>: <why>".
  static BpfObject open(const std::string& path, std::string* err);
  BpfObject() = default;
  ~BpfObject();
  BpfObject(BpfObject&& o) noexcept;
  BpfObject& operator=(BpfObject&& o) noexcept;
  BpfObject(const BpfObject&) = delete;
  BpfObject& operator=(const BpfObject&) = delete;

  // Loads it: maps created (or re-used: bpf_map__reuse_fd, a pin path), programs verified.
  // "" or "cannot load BPF object <path>: <why>" (libbpf printed the verifier's log).
  std::string load();
  bpf_object* get() const { return obj_; }
  const std::string& path() const { return path_; }
  explicit operator bool() const { return obj_ != nullptr; }

 private:
  bpf_object* obj_ = nullptr;
  std::string path_;
};

// A link (an attached program, an iterator, a struct_ops map), destroyed when it goes: the
// attachment ends then (a tracepoint is detached, a sched_ext scheduler disabled).
class BpfLink {
 public:
  BpfLink() = default;
  explicit BpfLink(bpf_link* link) : link_(link) {}
  ~BpfLink() { reset(); }
  BpfLink(BpfLink&& o) noexcept : link_(o.link_) { o.link_ = nullptr; }
  BpfLink& operator=(BpfLink&& o) noexcept;
  BpfLink(const BpfLink&) = delete;
  BpfLink& operator=(const BpfLink&) = delete;
  bpf_link* get() const { return link_; }
  explicit operator bool() const { return link_ != nullptr; }
  void reset();  // destroys the link now; idempotent

 private:
  bpf_link* link_ = nullptr;
};

}  // namespace c2c::kernel
