#include "kernel/bpf_object.hpp"

#include <bpf/libbpf.h>

#include <cerrno>
#include <utility>

#include "kernel/errno_text.hpp"

namespace c2c::kernel {

BpfObject BpfObject::open(const std::string& path, std::string* err) {
  BpfObject o;
  o.obj_ = bpf_object__open_file(path.c_str(), nullptr);
  if (o.obj_ == nullptr) {
    if (err != nullptr) *err = "cannot open BPF object " + path + ": " + errno_text(errno);
    return BpfObject();
  }
  o.path_ = path;
  return o;
}

BpfObject::~BpfObject() {
  if (obj_ != nullptr) bpf_object__close(obj_);
}

BpfObject::BpfObject(BpfObject&& o) noexcept : obj_(o.obj_), path_(std::move(o.path_)) { o.obj_ = nullptr; }

BpfObject& BpfObject::operator=(BpfObject&& o) noexcept {
  if (this != &o) {
    if (obj_ != nullptr) bpf_object__close(obj_);
    obj_ = o.obj_;
    path_ = std::move(o.path_);
    o.obj_ = nullptr;
  }
  return *this;
}

std::string BpfObject::load() {
  if (obj_ == nullptr) return "cannot load BPF object: not open";
  if (const int rc = bpf_object__load(obj_); rc != 0) return "cannot load BPF object " + path_ + ": " + errno_text(rc);
  return "";
}

BpfLink& BpfLink::operator=(BpfLink&& o) noexcept {
  if (this != &o) {
    reset();
    link_ = o.link_;
    o.link_ = nullptr;
  }
  return *this;
}

void BpfLink::reset() {
  if (link_ != nullptr) bpf_link__destroy(link_);
  link_ = nullptr;
}

}  // namespace c2c::kernel
