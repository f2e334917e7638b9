/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The process title's hash that a rename record carries (c2c_task_record.reserved of a
 * C2C_EV_RENAME): FNV-1a (32 bits) over argv[0] as the daemon reads it from /proc/<tgid>/cmdline,
 * at most C2C_TITLE_HASH_BYTES bytes up to its NUL (src/host/process_title.cpp), 0 when the program
 * could not read it (another process renamed the thread, the page was not resident, an empty
 * argv[0]) or did not (a rename of the leader, below). A rename of a thread other than the leader whose hash equals the cached title's needs
 * no read of the command line (src/host/process_title.hpp): a thread pool naming its workers.
 * The leader's renames are read anyway: a program may rename its main thread before it rewrites
 * argv (systemd's rename_process does), and the hash taken then is the old title's; so the program
 * takes none for them (0).
 *
 * Included by BPF C (after vmlinux.h) and by C++ (after <linux/types.h>).
 */
#ifndef CLAIM2CORE_TASK_TITLE_HASH_H
#define CLAIM2CORE_TASK_TITLE_HASH_H

#define C2C_TITLE_HASH_BYTES 256
#define C2C_TITLE_HASH_SEED 2166136261u

static inline __u32 c2c_title_hash_step(__u32 h, unsigned char c)
{
	return (h ^ c) * 16777619u;
}

/* 0 means "unknown": a title whose hash is 0 is reported as 1. */
static inline __u32 c2c_title_hash_final(__u32 h)
{
	return h ? h : 1;
}

#endif /* CLAIM2CORE_TASK_TITLE_HASH_H */
