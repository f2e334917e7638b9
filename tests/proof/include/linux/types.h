/* The kernel's fixed-width types for Frama-C, which parses with its own libc (-nostdinc) and so
 * cannot use the host's <linux/types.h>. Same widths as the kernel's on x86_64. */
#ifndef C2C_PROOF_LINUX_TYPES_H
#define C2C_PROOF_LINUX_TYPES_H
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed int __s32;
typedef signed long long __s64;
#endif
