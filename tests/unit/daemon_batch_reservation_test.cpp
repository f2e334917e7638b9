// When a command batch skips the undo copy of the state (src/daemon/durable/batch_reservation.hpp,
// spec/daemon.md "Durable before the map"): only when nothing foreseeable can keep its log record
// from being written. Each fact that can fail makes the batch copy the state first.
#include <gtest/gtest.h>

#include "daemon/durable/batch_reservation.hpp"

namespace c2c::daemon {
namespace {

BatchRoom roomy() {
  BatchRoom r;
  r.log_healthy = true;
  r.generation = 100;
  r.lease_ceiling = 100 + 1024;
  r.commands = 2;
  r.record_bound = kRecordFrameBytes + command_record_bound(300) + command_record_bound(40);
  r.record_reserved = true;
  r.free_bytes = 1u << 30;
  r.snapshot_bytes = 4096;
  return r;
}

TEST(DaemonBatchReservation, AHealthyLogWithRoomSkipsTheCopy) { EXPECT_TRUE(batch_skips_undo_copy(roomy())); }

TEST(DaemonBatchReservation, EveryFactThatCanFailTheWriteMakesTheBatchCopy) {
  auto r = roomy();
  r.log_healthy = false;  // no log, or a failed append that could not be cut back
  EXPECT_FALSE(batch_skips_undo_copy(r));
  r = roomy();
  r.record_reserved = false;  // fallocate: ENOSPC, or a file system that cannot reserve
  EXPECT_FALSE(batch_skips_undo_copy(r));
  r = roomy();
  r.free_bytes = r.record_bound + r.snapshot_bytes - 1;  // the next compaction would not fit
  EXPECT_FALSE(batch_skips_undo_copy(r));
  r.free_bytes += 1;
  EXPECT_TRUE(batch_skips_undo_copy(r));
  r = roomy();
  r.lease_ceiling = r.generation + kLeaseHeadroomPerCommand * r.commands - 1;  // the commit would extend the lease
  EXPECT_FALSE(batch_skips_undo_copy(r));
  r.lease_ceiling += 1;
  EXPECT_TRUE(batch_skips_undo_copy(r));
}

TEST(DaemonBatchReservation, TheRecordBoundGrowsWithTheRequest) {
  EXPECT_EQ(command_record_bound(0), kRecordBytesPerCommand);
  EXPECT_EQ(command_record_bound(1000) - command_record_bound(0), 1000 * kRecordBytesPerRequestByte);
}

}  // namespace
}  // namespace c2c::daemon
