// Crash consistency of the daemon's durable writes (issue 45), the way ALICE and CrashMonkey check
// applications: every file-system call of the durable writes (state.json and the generation file
// through host::write_file_durably, the state log's appends and truncations) is recorded through
// the seam host/file_ops.hpp while a workload runs the daemon's write path; then every state a
// power loss could leave after each recorded call is built in a fresh directory and the daemon's
// startup loader (load_durable_state, open_node_lease) must end in one of the states the daemon
// had acknowledged: the last one acknowledged before the crash, or the one being written.
//
// What a power loss may leave (a file system that keeps its metadata operations in order, like
// ext4's journal, but gives no promise about data it was not asked to sync):
//  * directory operations (a create, a rename) since the directory's last fsync: any prefix of
//    them, in order; fsync of the directory makes them all durable;
//  * a file's content since its last fsync/fdatasync: the old content, the new one, the new one
//    torn (half of it), or the new size with zeros where the data did not reach the disk (a
//    rename can land before the data of the file it names, unless that data was synced first).
// kill -9 keeps the page cache and can show none of this; the real writers run on tmpfs here.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "daemon/durable/durable_load.hpp"
#include "daemon/durable/generation_guard.hpp"
#include "host/file_ops.hpp"
#include "mirror/generation_store.hpp"

namespace c2c::daemon {
namespace {

namespace fs = std::filesystem;

struct FsOp {
  enum Kind { Create, Truncate, Write, Sync, Rename, SyncDir, Ack } kind;
  int inode = -1;          // Create (the new file), Truncate, Write, Sync
  std::string name, to;    // Create: name; Rename: name -> to
  uint64_t offset = 0;     // Write: where; Truncate: the new length
  std::string data;        // Write
  size_t ack = 0;          // Ack: the index of the state acknowledged
};

FsOp make_op(FsOp::Kind kind, int inode = -1, std::string name = {}, std::string to = {}, uint64_t offset = 0,
             std::string data = {}, size_t ack = 0) {
  FsOp op;
  op.kind = kind;
  op.inode = inode;
  op.name = std::move(name);
  op.to = std::move(to);
  op.offset = offset;
  op.data = std::move(data);
  op.ack = ack;
  return op;
}

// Performs every call (POSIX) and records those on files of one directory.
class RecordingFileOps final : public host::FileOps {
 public:
  explicit RecordingFileOps(std::string dir) : dir_(std::move(dir)) {}
  std::vector<FsOp> ops;

  int open(const char* path, int flags, mode_t mode) override {
    const fs::path p(path);
    if ((flags & O_DIRECTORY) != 0) {
      const int fd = real_.open(path, flags, mode);
      if (fd >= 0 && p == fs::path(dir_)) fds_[fd] = Fd{-1, true, 0};
      return fd;
    }
    if (p.parent_path() != fs::path(dir_)) return real_.open(path, flags, mode);
    const std::string name = p.filename().string();
    const int fd = real_.open(path, flags, mode);
    if (fd < 0) return fd;
    auto it = names_.find(name);
    if (it == names_.end()) {
      it = names_.emplace(name, next_inode_++).first;
      ops.push_back(make_op(FsOp::Create, it->second, name));
    }
    if ((flags & O_TRUNC) != 0) ops.push_back(make_op(FsOp::Truncate, it->second, {}, {}, 0));
    fds_[fd] = Fd{it->second, false, 0};
    return fd;
  }
  ssize_t write(int fd, const void* buf, size_t n) override {
    const ssize_t r = real_.write(fd, buf, n);
    if (auto it = fds_.find(fd); r > 0 && it != fds_.end()) {
      ops.push_back(make_op(FsOp::Write, it->second.inode, {}, {}, it->second.pos,
                            std::string(static_cast<const char*>(buf), static_cast<size_t>(r))));
      it->second.pos += static_cast<uint64_t>(r);
    }
    return r;
  }
  ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) override {
    const ssize_t r = real_.pwrite(fd, buf, n, offset);
    if (auto it = fds_.find(fd); r > 0 && it != fds_.end())
      ops.push_back(make_op(FsOp::Write, it->second.inode, {}, {}, static_cast<uint64_t>(offset),
                            std::string(static_cast<const char*>(buf), static_cast<size_t>(r))));
    return r;
  }
  int fsync(int fd) override { return synced(fd, real_.fsync(fd)); }
  int fdatasync(int fd) override { return synced(fd, real_.fdatasync(fd)); }
  int ftruncate(int fd, off_t length) override {
    const int r = real_.ftruncate(fd, length);
    if (auto it = fds_.find(fd); r == 0 && it != fds_.end())
      ops.push_back(make_op(FsOp::Truncate, it->second.inode, {}, {}, static_cast<uint64_t>(length)));
    return r;
  }
  int close(int fd) override {
    fds_.erase(fd);
    return real_.close(fd);
  }
  int rename(const char* from, const char* to) override {
    const int r = real_.rename(from, to);
    const fs::path f(from), t(to);
    if (r == 0 && f.parent_path() == fs::path(dir_) && t.parent_path() == fs::path(dir_)) {
      const std::string a = f.filename().string(), b = t.filename().string();
      if (auto it = names_.find(a); it != names_.end()) {
        names_[b] = it->second;
        names_.erase(a);
        ops.push_back(make_op(FsOp::Rename, -1, a, b));
      }
    }
    return r;
  }
  void ack(size_t index) { ops.push_back(make_op(FsOp::Ack, -1, {}, {}, 0, {}, index)); }

 private:
  struct Fd {
    int inode;
    bool is_dir;
    uint64_t pos;
  };
  int synced(int fd, int r) {
    if (auto it = fds_.find(fd); r == 0 && it != fds_.end())
      ops.push_back(it->second.is_dir ? make_op(FsOp::SyncDir) : make_op(FsOp::Sync, it->second.inode));
    return r;
  }
  host::FileOps& real_ = host::posix_file_ops();
  std::string dir_;
  std::map<std::string, int> names_;
  std::map<int, Fd> fds_;
  int next_inode_ = 0;
};

using Image = std::map<std::string, std::string>;  // file name -> content

void write_at(std::string& s, uint64_t off, const std::string& d) {
  if (s.size() < off + d.size()) s.resize(off + d.size(), '\0');
  s.replace(off, d.size(), d);
}

// Every directory image a power loss right after ops[0, k) may leave.
std::vector<Image> crash_images(const std::vector<FsOp>& ops, size_t k) {
  std::map<std::string, int> durable_dir, dir;
  std::vector<const FsOp*> pending;  // directory operations since the last directory fsync
  std::map<int, std::string> durable, content;
  for (size_t i = 0; i < k; ++i) {
    const FsOp& op = ops[i];
    switch (op.kind) {
      case FsOp::Create:
        dir[op.name] = op.inode;
        content[op.inode];
        durable[op.inode];
        pending.push_back(&op);
        break;
      case FsOp::Truncate: content[op.inode].resize(op.offset, '\0'); break;
      case FsOp::Write: write_at(content[op.inode], op.offset, op.data); break;
      case FsOp::Sync: durable[op.inode] = content[op.inode]; break;
      case FsOp::Rename:
        dir[op.to] = dir[op.name];
        dir.erase(op.name);
        pending.push_back(&op);
        break;
      case FsOp::SyncDir:
        durable_dir = dir;
        pending.clear();
        break;
      case FsOp::Ack: break;
    }
  }
  // Content choices: all as synced, all as written, and each unsynced file torn or zero-filled.
  std::vector<std::map<int, std::string>> contents{durable, content};
  for (const auto& [inode, now] : content) {
    const std::string& was = durable[inode];
    if (now == was) continue;
    auto torn = durable, zeros = durable;
    if (now.size() > was.size() && now.compare(0, was.size(), was) == 0) {  // an append
      torn[inode] = was + now.substr(was.size(), (now.size() - was.size()) / 2);
      zeros[inode] = was + std::string(now.size() - was.size(), '\0');
    } else {
      torn[inode] = now.substr(0, now.size() / 2) + (was.size() > now.size() / 2 ? was.substr(now.size() / 2) : "");
      zeros[inode] = std::string(now.size(), '\0');
    }
    contents.push_back(std::move(torn));
    contents.push_back(std::move(zeros));
  }
  std::set<Image> images;
  for (size_t j = 0; j <= pending.size(); ++j) {
    std::map<std::string, int> d = durable_dir;
    for (size_t p = 0; p < j; ++p) {
      if (pending[p]->kind == FsOp::Create) {
        d[pending[p]->name] = pending[p]->inode;
      } else if (auto it = d.find(pending[p]->name); it != d.end()) {
        d[pending[p]->to] = it->second;
        d.erase(pending[p]->name);
      }
    }
    for (const auto& c : contents) {
      Image img;
      for (const auto& [name, inode] : d) img[name] = c.count(inode) ? c.at(inode) : std::string();
      images.insert(std::move(img));
    }
  }
  return {images.begin(), images.end()};
}

// What the daemon acknowledged: its durable state and the generation ceiling on disk.
struct Acked {
  DurableState state;
  uint64_t generation = 0;
};

// The daemon's startup loader on an image: the state and the generation floor, or why it refused.
std::optional<Acked> start_from(const fs::path& dir, const Image& img, std::string* err) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [name, bytes] : img) std::ofstream(dir / name, std::ios::binary) << bytes;
  auto lease = open_node_lease(dir.string(), static_cast<mirror::PolicyMapIo*>(nullptr), false, err);
  if (!lease) return std::nullopt;
  LoadedState loaded;
  if (!load_durable_state(dir.string(), &loaded, err)) return std::nullopt;
  return Acked{std::move(loaded.state), lease->floor()};
}

std::string describe(const Image& img) {
  std::ostringstream os;
  for (const auto& [name, bytes] : img) os << "  " << name << ": " << bytes.size() << " bytes\n";
  return os.str();
}

NodeSchedulingPolicy policy(const std::string& name, int64_t generation) {
  NodeSchedulingPolicy p;
  p.name = name;
  p.generation = generation;
  p.node_names = {"node-a"};
  p.command_regex = "^EngineCore$";
  p.priority = 1;
  p.execution_time = 2'000'000;
  return p;
}

class CrashConsistency : public ::testing::Test {
 protected:
  fs::path dir, scratch;
  std::unique_ptr<RecordingFileOps> rec;
  std::vector<Acked> acked{Acked{}};  // A0: nothing written yet
  DurableState mem;                   // the daemon's durable state in memory
  std::optional<mirror::GenerationLease> lease;
  std::unique_ptr<StateLog> log;

  void SetUp() override {
    const std::string tag = std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir = fs::temp_directory_path() / ("c2c-crash-" + tag);
    scratch = fs::temp_directory_path() / ("c2c-crash-start-" + tag);
    fs::remove_all(dir);
    fs::create_directories(dir);
    rec = std::make_unique<RecordingFileOps>(dir.string());
    host::set_file_ops(rec.get());
  }
  void TearDown() override {
    log.reset();
    host::set_file_ops(nullptr);
    fs::remove_all(dir);
    fs::remove_all(scratch);
  }
  void ack() {
    acked.push_back(Acked{mem, lease ? lease->durable() : 0});
    rec->ack(acked.size() - 1);
  }
  // The engine's write path (engine.cpp): the lease covered before use, a batch's changes as one
  // log record (write_batch), the snapshot and then the log emptied (compact).
  void cover(uint64_t g) {
    ASSERT_EQ(lease->cover(g), "");
    ack();
  }
  void batch(const std::vector<StateChange>& changes) {
    for (const auto& c : changes) apply_change(mem, c);
    ++mem.log_seq;
    ASSERT_EQ(log->append(encode_changes(mem.log_seq, changes)), "");
    ack();
  }
  void compact() {
    ASSERT_EQ(save_state((dir / "state.json").string(), mem), "");
    ack();
    if (log->size() > 0) {
      ASSERT_EQ(log->reset(), "");
    }
  }
  // A daemon's life: first start, batches, a lease extension, compactions, a restart.
  void workload() {
    std::string err;
    lease = open_node_lease(dir.string(), static_cast<mirror::PolicyMapIo*>(nullptr), false, &err);
    ASSERT_TRUE(lease) << err;
    cover(1);  // the restart's generation, covered at once
    LoadedState loaded;
    ASSERT_TRUE(load_durable_state(dir.string(), &loaded, &err)) << err;
    log = std::move(loaded.log);
    compact();  // the start persists
    batch({PutPolicy{policy("vllm", 1)}});
    Claim c;
    c.uid = "claim-1";
    c.generation = 4;
    c.node = "node-a";
    batch({PutClaim{c}, AckPreview{PolicyKind::Node, "vllm", 1}});
    cover(1500);
    compact();
    batch({PutPolicy{policy("vllm", 2)}, PutPolicy{policy("other", 1)}});
    batch({DeletePolicy{PolicyKind::Node, "other", 1}, DeleteClaim{"claim-1", 4}});
    // A restart: the log is opened again and the next records follow the last complete one.
    log.reset();
    lease = mirror::GenerationLease::open((dir / "generation").string()).value();
    ASSERT_TRUE(load_durable_state(dir.string(), &loaded, &err)) << err;
    ASSERT_EQ(loaded.state, mem);
    log = std::move(loaded.log);
    cover(lease->floor() + 1);
    batch({PutPolicy{policy("after-restart", 7)}});
    compact();
  }
  // Every crash point, every image: the loader ends in the last acknowledged state or the next.
  void check_every_crash() {
    host::set_file_ops(nullptr);
    const auto& ops = rec->ops;
    size_t last_ack = 0, images = 0, points = 0;
    std::vector<std::string> failures;
    for (size_t k = 0; k <= ops.size(); ++k) {
      // Right after an acknowledgement the same images must give that state or a later one.
      if (k > 0 && ops[k - 1].kind == FsOp::Ack) last_ack = ops[k - 1].ack;
      ++points;
      for (const Image& img : crash_images(ops, k)) {
        ++images;
        std::string err;
        const auto got = start_from(scratch, img, &err);
        std::string why;
        if (!got) {
          why = "the start refused: " + err;
        } else {
          bool ok = false;
          for (size_t a = last_ack; a <= last_ack + 1 && a < acked.size(); ++a)
            ok = ok || (got->state == acked[a].state && got->generation == acked[a].generation);
          if (!ok)
            why = "started with a state that was never acknowledged (log_seq " + std::to_string(got->state.log_seq) +
                  ", " + std::to_string(got->state.policies.size()) + " policies, generation " +
                  std::to_string(got->generation) + "; acknowledged: log_seq " +
                  std::to_string(acked[last_ack].state.log_seq) + ", generation " +
                  std::to_string(acked[last_ack].generation) + ")";
        }
        if (!why.empty() && failures.size() < 5)
          failures.push_back("crash after call " + std::to_string(k) + " of " + std::to_string(ops.size()) +
                             " (acknowledged: state " + std::to_string(last_ack) + "): " + why + "\n" + describe(img));
        if (!why.empty() && failures.size() >= 5) break;
      }
    }
    std::cout << "crash consistency: " << ops.size() << " recorded calls, " << points << " crash points, " << images
              << " crash images started, " << acked.size() - 1 << " acknowledged writes" << std::endl;
    std::string all;
    for (const auto& f : failures) all += f + "\n";
    EXPECT_TRUE(failures.empty()) << all;
    EXPECT_GT(images, points) << "the model left nothing unsynced to lose";
  }
};

TEST_F(CrashConsistency, EveryPowerLossStartsInAnAcknowledgedState) {
  workload();
  ASSERT_FALSE(HasFatalFailure());
  // The recording saw the calls the promise rests on.
  size_t syncs = 0, dir_syncs = 0, renames = 0;
  for (const auto& op : rec->ops) {
    syncs += op.kind == FsOp::Sync;
    dir_syncs += op.kind == FsOp::SyncDir;
    renames += op.kind == FsOp::Rename;
  }
  EXPECT_GE(renames, 5u);
  EXPECT_GE(dir_syncs, renames);
  EXPECT_GE(syncs, 10u);
  check_every_crash();
}

// The checker itself: a writer that renames before its data is synced (the order this test
// guards) is caught. The writer here is the seam's own: the recorded calls reordered.
TEST_F(CrashConsistency, ARenameBeforeTheDataIsSyncedIsCaught) {
  workload();
  ASSERT_FALSE(HasFatalFailure());
  auto& ops = rec->ops;
  // Move every file fsync that precedes a rename after that rename (what the bug would record).
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    if (ops[i].kind != FsOp::Sync) continue;
    size_t j = i + 1;
    while (j < ops.size() && ops[j].kind != FsOp::Rename && ops[j].kind != FsOp::Sync && ops[j].kind != FsOp::Write)
      ++j;
    if (j < ops.size() && ops[j].kind == FsOp::Rename) {
      std::swap(ops[i], ops[j]);
      i = j;
    }
  }
  host::set_file_ops(nullptr);
  size_t last_ack = 0;
  bool caught = false;
  for (size_t k = 0; k <= ops.size() && !caught; ++k) {
    if (k > 0 && ops[k - 1].kind == FsOp::Ack) last_ack = ops[k - 1].ack;
    for (const Image& img : crash_images(ops, k)) {
      std::string err;
      const auto got = start_from(scratch, img, &err);
      bool ok = false;
      for (size_t a = last_ack; got && a <= last_ack + 1 && a < acked.size(); ++a)
        ok = ok || (got->state == acked[a].state && got->generation == acked[a].generation);
      if (!ok) {
        caught = true;
        break;
      }
    }
  }
  EXPECT_TRUE(caught) << "a rename that lands before its data went unnoticed";
}

}  // namespace
}  // namespace c2c::daemon
