/* claim2core_role.h: register the role of a thread with claim2cored (issue #14). Header-only,
 * C99 or C++, no dependencies beyond libc; MIT-style: copy it into your tree.
 *
 *   #include "claim2core_role.h"
 *   void* decode_loop(void* arg) {
 *     c2c_register_role("decode");   // at thread start: this thread is a decode thread
 *     ...
 *   }
 *
 * A DRAExecutionPolicy's `taskRoles[].selector.registeredRole: decode` then matches the thread
 * (as long as it lives: the role is keyed by (tid, start) and leaves with the thread).
 *
 * It speaks the role socket's line protocol, version 1 (spec/daemon.md "Task roles"): one
 * line `C2C-ROLE/1 SET <tid> <start> <role>` (start 0: the daemon reads it), one reply line
 * `OK ...` or `ERR <CODE> <message>`. The socket is $CLAIM2CORE_ROLE_SOCKET, else
 * /run/claim2core-roles/roles.sock. A process may label only its own threads (the daemon checks
 * the peer's credentials); root or a uid in the daemon's allowed_uids may label any thread.
 *
 * Every function returns 0 on success or a negative errno: -EPERM (PERMISSION_DENIED), -EINVAL
 * (INVALID_ARGUMENT: the role is empty, longer than 63 bytes or has whitespace), -ESRCH
 * (NOT_FOUND: no such thread), -ESTALE (FAILED_PRECONDITION: the start is not the live task's),
 * -EAGAIN (UNAVAILABLE: the daemon is draining or cannot persist), -EBUSY (RESOURCE_EXHAUSTED:
 * a limit of the role socket, e.g. too many connections of this uid or requests too fast; the
 * message names the config key; retry later), -ECONNRESET (UNAUTHENTICATED: the process that
 * opened the connection has exited, e.g. a forked child kept it: open a new one), -EPROTO (an
 * unreadable reply), or the errno of socket/connect/read/write (-ENOENT, -ECONNREFUSED: no
 * daemon). A connection refused by a limit is closed after its ERR line, which is returned even
 * when the request could not be sent. A workload should log a failure and carry on: without a
 * role its thread is simply not matched by role.
 */
#ifndef CLAIM2CORE_ROLE_H
#define CLAIM2CORE_ROLE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define C2C_ROLE_PROTOCOL "C2C-ROLE/1"
#define C2C_ROLE_SOCKET_ENV "CLAIM2CORE_ROLE_SOCKET"
#define C2C_ROLE_DEFAULT_SOCKET "/run/claim2core-roles/roles.sock"
#define C2C_ROLE_MAX_LINE 256

#ifdef __cplusplus
extern "C" {
#endif

/* The socket path: $CLAIM2CORE_ROLE_SOCKET, else the default. */
static inline const char* c2c_role_socket(void) {
  const char* env = getenv(C2C_ROLE_SOCKET_ENV);
  return env && *env ? env : C2C_ROLE_DEFAULT_SOCKET;
}

static inline int c2c_role_errno_of(const char* code) {
  if (strcmp(code, "PERMISSION_DENIED") == 0) return -EPERM;
  if (strcmp(code, "INVALID_ARGUMENT") == 0) return -EINVAL;
  if (strcmp(code, "NOT_FOUND") == 0) return -ESRCH;
  if (strcmp(code, "FAILED_PRECONDITION") == 0) return -ESTALE;
  if (strcmp(code, "UNAVAILABLE") == 0) return -EAGAIN;
  if (strcmp(code, "RESOURCE_EXHAUSTED") == 0) return -EBUSY;
  if (strcmp(code, "UNAUTHENTICATED") == 0) return -ECONNRESET;
  return -EPROTO;
}

/* Opens a connection to the role socket (fd >= 0) or returns a negative errno. */
static inline int c2c_role_connect(const char* socket_path) {
  struct sockaddr_un addr;
  struct timeval tv = {5, 0}; /* a daemon that does not answer in 5 s is reported, not waited for */
  int fd;
  if (!socket_path) socket_path = c2c_role_socket();
  if (strlen(socket_path) >= sizeof addr.sun_path) return -ENAMETOOLONG;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, (struct sockaddr*)&addr, sizeof addr) != 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  return fd;
}

/* One request on an open connection: role NULL or "" unregisters. The reply line (without its
 * newline) is copied into `reply` when given (`reply_len` bytes at most). */
static inline int c2c_role_request(int fd, unsigned tid, unsigned long long start, const char* role, char* reply,
                                   size_t reply_len) {
  char line[C2C_ROLE_MAX_LINE + 2], in[C2C_ROLE_MAX_LINE + 2], code[32];
  size_t got = 0;
  int n;
  if (role && *role)
    n = snprintf(line, sizeof line, C2C_ROLE_PROTOCOL " SET %u %llu %s\n", tid, start, role);
  else
    n = snprintf(line, sizeof line, C2C_ROLE_PROTOCOL " CLEAR %u %llu\n", tid, start);
  if (n < 0 || (size_t)n >= sizeof line) return -EINVAL;
  if (send(fd, line, (size_t)n, MSG_NOSIGNAL) != n) {
    /* The daemon may have refused the connection (a limit) and closed it: its ERR line is still
     * there to read. */
    int e = errno ? -errno : -EIO;
    ssize_t r = recv(fd, in, sizeof in - 1, MSG_DONTWAIT);
    char* nl = r > 0 ? (char*)memchr(in, '\n', (size_t)r) : NULL;
    if (r < 4 || strncmp(in, "ERR ", 4) != 0) return e;
    got = nl ? (size_t)(nl - in) : (size_t)r;
  } else {
    while (got < sizeof in - 1) {
      ssize_t r = read(fd, in + got, 1); /* byte by byte: the reply is one short line */
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return r == 0 ? -EPROTO : -errno;
      if (in[got] == '\n') break;
      ++got;
    }
  }
  in[got] = '\0';
  if (reply && reply_len) {
    size_t n_copy = got < reply_len - 1 ? got : reply_len - 1;
    memcpy(reply, in, n_copy);
    reply[n_copy] = '\0';
  }
  if (strncmp(in, "OK ", 3) == 0) return 0;
  if (sscanf(in, "ERR %31s", code) == 1) return c2c_role_errno_of(code);
  return -EPROTO;
}

/* Registers `role` for thread `tid` (0: the calling thread) on `socket_path` (NULL: the
 * default); role NULL or "" unregisters. */
static inline int c2c_register_role_for(const char* socket_path, unsigned tid, const char* role, char* reply,
                                        size_t reply_len) {
  int fd, rc;
  if (tid == 0) tid = (unsigned)syscall(SYS_gettid);
  fd = c2c_role_connect(socket_path);
  if (fd < 0) return fd;
  rc = c2c_role_request(fd, tid, 0, role, reply, reply_len);
  close(fd);
  return rc;
}

/* The one call a workload makes at thread start. */
static inline int c2c_register_role(const char* role) { return c2c_register_role_for(NULL, 0, role, NULL, 0); }

#ifdef __cplusplus
}
#endif

#endif /* CLAIM2CORE_ROLE_H */
