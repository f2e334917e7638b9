// src/kernel, the one layer between the project and BPF objects and maps: pins opened and made,
// the map check naming the pin and the field for each way a map can differ, the owners closing
// what they hold, the bpf() calls' errno. Real maps under a private pin root (root, bpffs).
#include <gtest/gtest.h>

#include <bpf/bpf.h>  // the tests make the wrong maps themselves; src/ reaches bpf() through src/kernel
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "claim2core_abi.h"
#include "host/bpf_object_path.hpp"
#include "kernel/bpf_object.hpp"
#include "kernel/errno_text.hpp"
#include "kernel/map_check.hpp"
#include "kernel/map_ops.hpp"
#include "kernel/pins.hpp"
#include "kernel/unique_fd.hpp"

namespace {

using namespace c2c::kernel;

bool is_bpffs(const char* path) {
  struct statfs st;
  return ::statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

std::string bpffs_unavailable() {
  if (::geteuid() != 0) return "needs root (BPF maps and bpffs pins)";
  if (!is_bpffs("/sys/fs/bpf")) {
    ::mkdir("/sys/fs/bpf", 0700);
    if (::mount("bpf", "/sys/fs/bpf", "bpf", 0, nullptr) != 0 || !is_bpffs("/sys/fs/bpf"))
      return "no bpffs at /sys/fs/bpf and mounting one failed";
  }
  return "";
}

class KernelLayer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = bpffs_unavailable(); !why.empty()) GTEST_SKIP() << why;
    root_ = "/sys/fs/bpf/c2c-test-kernel-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
  }
  void TearDown() override {
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }
  // A map made here and pinned at root_/name; its fd is closed, the pin keeps it.
  std::string pinned(const char* name, bpf_map_type type, uint32_t key, uint32_t value, uint32_t max,
                     uint32_t flags = 0) {
    EXPECT_EQ(make_pin_dirs(root_), "");
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);
    UniqueFd fd(bpf_map_create(type, name, key, value, max, &opts));
    EXPECT_TRUE(fd) << std::strerror(errno);
    const std::string pin = root_ + "/" + name;
    EXPECT_EQ(pin_object(fd.get(), pin), "");
    return pin;
  }
  static MapLayout hash_layout() {
    MapLayout l;
    l.type = BPF_MAP_TYPE_HASH;
    l.key_size = 4;
    l.value_size = 16;
    l.max_entries = 8;
    l.map_flags = 0;
    return l;
  }
  // check_map of the map pinned at pin against `want`.
  static std::string check_pin(const std::string& pin, const MapLayout& want) {
    OpenedPin p = open_pin(pin);
    EXPECT_TRUE(p.fd) << p.what;
    return check_map(p.fd.get(), want, pin);
  }
  std::string root_;
};

TEST(KernelErrnoText, AcceptsBothSigns) {
  EXPECT_EQ(errno_text(ENOENT), std::strerror(ENOENT));
  EXPECT_EQ(errno_text(-ENOENT), std::strerror(ENOENT));
}

TEST(KernelUniqueFd, ClosesWhatItHoldsOnceAndMovesOwnership) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ::close(p[1]);
  const int raw = p[0];
  {
    UniqueFd a(raw);
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), raw);
    EXPECT_NE(::fcntl(raw, F_GETFD), -1) << "a move must not close";
  }
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1) << "closed when its owner went";
  EXPECT_EQ(errno, EBADF);
}

TEST(KernelBpfObject, OpenOfAMissingFileNamesThePath) {
  std::string err;
  BpfObject o = BpfObject::open("/nonexistent/c2c-kernel-test.bpf.o", &err);
  EXPECT_FALSE(o);
  EXPECT_EQ(err, "cannot open BPF object /nonexistent/c2c-kernel-test.bpf.o: " + errno_text(ENOENT));
  EXPECT_NE(o.load(), "") << "an object that is not open cannot load";
  BpfLink none;
  none.reset();  // idempotent on nothing
  EXPECT_FALSE(none);
}

TEST_F(KernelLayer, OpenPinSaysMissingAndNamesThePath) {
  const OpenedPin p = open_pin(root_ + "/absent");
  EXPECT_FALSE(p.fd);
  EXPECT_TRUE(p.missing());
  EXPECT_EQ(p.what, "pin " + root_ + "/absent: cannot open: " + errno_text(ENOENT));
}

TEST_F(KernelLayer, PinnedMapIsOpenedAgainAsTheSameMap) {
  const std::string pin = pinned("c2c_k_same", BPF_MAP_TYPE_HASH, 4, 16, 8);
  OpenedPin a = open_pin(pin), b = open_pin(pin);
  ASSERT_TRUE(a.fd) << a.what;
  ASSERT_TRUE(b.fd) << b.what;
  EXPECT_NE(map_id(a.fd.get()), 0u);
  EXPECT_EQ(map_id(a.fd.get()), map_id(b.fd.get()));
  EXPECT_EQ(check_map(a.fd.get(), hash_layout(), pin), "");
  EXPECT_NE(pin_object(a.fd.get(), pin), "") << "a pin path that is taken is refused";
}

TEST_F(KernelLayer, EachMismatchNamesThePinTheFieldWhatItIsAndWhatIsExpected) {
  struct Case {
    const char* name;
    bpf_map_type type;
    uint32_t key, value, max, flags;
    const char* field;
    uint64_t is, want;
  };
  const Case cases[] = {
      {"c2c_k_type", BPF_MAP_TYPE_ARRAY, 4, 16, 8, 0, "map_type", BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_HASH},
      {"c2c_k_key", BPF_MAP_TYPE_HASH, 8, 16, 8, 0, "key_size", 8, 4},
      {"c2c_k_value", BPF_MAP_TYPE_HASH, 4, 24, 8, 0, "value_size", 24, 16},
      {"c2c_k_max", BPF_MAP_TYPE_HASH, 4, 16, 64, 0, "max_entries", 64, 8},
      {"c2c_k_flags", BPF_MAP_TYPE_HASH, 4, 16, 8, BPF_F_NO_PREALLOC, "map_flags", BPF_F_NO_PREALLOC, 0},
  };
  for (const Case& c : cases) {
    const std::string pin = pinned(c.name, c.type, c.key, c.value, c.max, c.flags);
    EXPECT_EQ(check_pin(pin, hash_layout()), mismatch_text(pin, c.field, c.is, c.want)) << c.field;
    EXPECT_EQ(mismatch_text(pin, c.field, c.is, c.want),
              "pinned map " + pin + ": " + c.field + " is " + std::to_string(c.is) + ", this build (ABI v" +
                  std::to_string(C2C_ABI_VERSION) + ") expects " + std::to_string(c.want));
  }
  // What a layout leaves open is not checked.
  MapLayout any_size = hash_layout();
  any_size.max_entries.reset();
  EXPECT_EQ(check_pin(root_ + "/c2c_k_max", any_size), "");
  MapLayout any_flags = hash_layout();
  any_flags.map_flags.reset();
  EXPECT_EQ(check_pin(root_ + "/c2c_k_flags", any_flags), "");
}

TEST_F(KernelLayer, AMapWithoutBtfIsRefusedWhereAValueTypeIsExpected) {
  const std::string pin = pinned("c2c_k_nobtf", BPF_MAP_TYPE_HASH, 4, 16, 8);
  MapLayout want = hash_layout();
  want.btf_value = "c2c_policy_value";
  const std::string why = check_pin(pin, want);
  EXPECT_NE(why.find("pinned map " + pin + ": has no BTF"), std::string::npos) << why;
}

// The object's maps carry BTF: the value type's name and size are checked.
TEST_F(KernelLayer, TheBtfValueTypeIsCheckedByNameAndSize) {
  auto path = c2c::host::find_bpf_object("policy_maps");
  if (!path) GTEST_SKIP() << "policy_maps.bpf.o is not built (bpf in C2C_PARTS)";
  std::string err;
  BpfObject obj = BpfObject::open(path->string(), &err);
  ASSERT_TRUE(obj) << err;
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, obj.get()) bpf_program__set_autoload(prog, false);
  ASSERT_EQ(obj.load(), "");
  const int fd = bpf_object__find_map_fd_by_name(obj.get(), C2C_META_MAP_NAME);
  ASSERT_GE(fd, 0);
  MapLayout meta;
  meta.type = BPF_MAP_TYPE_ARRAY;
  meta.key_size = 4;
  meta.value_size = sizeof(c2c_meta);
  meta.btf_value = "c2c_meta";
  EXPECT_EQ(check_map(fd, meta, "meta"), "");
  meta.btf_value = "c2c_policy_value";
  EXPECT_EQ(check_map(fd, meta, "meta"), "pinned map meta: BTF value type is 'c2c_meta', expected 'c2c_policy_value'");
}

TEST_F(KernelLayer, AnFdThatIsNotAMapHasNoFacts) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd r(p[0]), w(p[1]);
  std::string why;
  EXPECT_FALSE(map_facts(r.get(), &why));
  EXPECT_EQ(why.rfind("cannot read map info: ", 0), 0u) << why;
  EXPECT_EQ(map_id(r.get()), 0u);
  EXPECT_EQ(check_map(r.get(), hash_layout(), "a pipe").rfind("pinned map a pipe: cannot read map info", 0), 0u);
}

TEST_F(KernelLayer, MapCallsReturnAPositiveErrno) {
  const std::string pin = pinned("c2c_k_ops", BPF_MAP_TYPE_HASH, 4, 16, 2);
  OpenedPin p = open_pin(pin);
  ASSERT_TRUE(p.fd) << p.what;
  const int fd = p.fd.get();
  uint32_t key = 7, next = 0;
  char value[16] = {1}, back[16] = {};
  EXPECT_EQ(map_lookup(fd, &key, back), ENOENT);
  EXPECT_EQ(map_next_key(fd, nullptr, &next), ENOENT);
  EXPECT_EQ(map_update(fd, &key, value), 0);
  EXPECT_EQ(map_lookup(fd, &key, back), 0);
  EXPECT_EQ(back[0], 1);
  EXPECT_EQ(map_next_key(fd, nullptr, &next), 0);
  EXPECT_EQ(next, 7u);
  uint32_t keys[2] = {8, 9};
  char values[32] = {};
  uint32_t count = 2;
  EXPECT_EQ(map_update_batch(fd, keys, values, &count), E2BIG) << "a third entry in a map of 2";
  EXPECT_EQ(map_delete(fd, &key), 0);
  EXPECT_EQ(map_delete(fd, &key), ENOENT);
}

}  // namespace
