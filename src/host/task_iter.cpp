#include "host/task_iter.hpp"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "claim2core_abi.hpp"
#include "host/bpf_object_path.hpp"
#include "host/bpf_rodata.hpp"
#include "host/task_record.hpp"
#include "kernel/errno_text.hpp"
#include "kernel/map_ops.hpp"

namespace c2c::host {

using kernel::errno_text;

std::unique_ptr<BpfTaskIterator> BpfTaskIterator::open(std::string* err, const std::filesystem::path& object,
                                                       CgroupIdOf cgroup_id_of) {
  std::filesystem::path path = object;
  if (path.empty()) {
    auto found = find_bpf_object("task_iter", err);
    if (!found) return nullptr;
    path = *found;
  }
  std::unique_ptr<BpfTaskIterator> it(new BpfTaskIterator());
  std::string why;
  it->obj_ = kernel::BpfObject::open(path.string(), &why);
  if (!it->obj_) {
    if (err) *err = why;
    return nullptr;
  }
  if (std::string e = set_rodata_u32(it->obj_.get(), "c2c_cgroup_id_of", static_cast<uint32_t>(cgroup_id_of)); !e.empty()) {
    if (err) *err = path.string() + ": " + e;
    return nullptr;
  }
  if (std::string e = it->obj_.load(); !e.empty()) {
    if (err) *err = e;
    return nullptr;
  }
  bpf_program* prog = bpf_object__find_program_by_name(it->obj_.get(), "c2c_task_iter");
  if (prog == nullptr) {
    if (err) *err = path.string() + ": no program c2c_task_iter";
    return nullptr;
  }
  it->all_ = kernel::BpfLink(bpf_program__attach_iter(prog, nullptr));
  if (!it->all_) {
    if (err) *err = "attach task iterator: " + errno_text(errno);
    return nullptr;
  }
  return it;
}

std::optional<std::vector<TaskInfo>> BpfTaskIterator::read_link(const kernel::BpfLink& link, std::string* err) {
  kernel::UniqueFd iter;
  if (const int e = kernel::iter_open(bpf_link__fd(link.get()), &iter); e != 0) {
    if (err) *err = "bpf_iter_create: " + errno_text(e);
    return std::nullopt;
  }
  const int fd = iter.get();
  std::vector<TaskInfo> out;
  // One read returns whole records (bpf_seq_write never splits one across reads), but a
  // remainder is carried over anyway so that a short read cannot corrupt the stream.
  std::vector<char> buf(1 << 16);
  size_t have = 0;
  int eagain = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data() + have, buf.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN && ++eagain < 100) continue;  // transient; bounded so it cannot spin
      if (err) *err = "read task iterator: " + errno_text(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
    size_t off = 0;
    while (have - off >= sizeof(c2c_task_record)) {
      ParseError pe;
      auto ev = decode_task_record(buf.data() + off, sizeof(c2c_task_record), &pe);
      if (!ev) {
        if (err) *err = "task iterator record: " + pe.to_string();
        return std::nullopt;
      }
      out.push_back(std::move(ev->task));
      off += sizeof(c2c_task_record);
    }
    std::memmove(buf.data(), buf.data() + off, have - off);
    have -= off;
  }
  if (have != 0) {
    if (err) *err = "task iterator: trailing " + std::to_string(have) + " bytes";
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<TaskInfo>> BpfTaskIterator::snapshot(std::string* err, std::optional<uint32_t> tgid) {
  if (!tgid) return read_link(all_, err);
  // Kernel-side filter (bpf_iter_link_info.task.pid, Linux 6.1+): only this process's threads.
  bpf_iter_link_info info;
  std::memset(&info, 0, sizeof info);
  info.task.pid = *tgid;
  LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof info);
  bpf_program* prog = bpf_object__find_program_by_name(obj_.get(), "c2c_task_iter");
  const kernel::BpfLink link(bpf_program__attach_iter(prog, &opts));
  if (!link) {
    if (errno == ESRCH) return std::vector<TaskInfo>{};  // the process is gone: no threads, as in /proc
    if (err) *err = "attach task iterator for pid " + std::to_string(*tgid) + ": " + errno_text(errno);
    return std::nullopt;
  }
  return read_link(link, err);
}

}  // namespace c2c::host
