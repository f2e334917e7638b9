/* The header-only helper as a workload uses it: a thread registers its role at its start.
 * Used by tests/integration/task_roles_test.py (cli.task_roles) and as the README's example.
 *
 *   cc -O2 -pthread role_example.c -o role_example && ./role_example decode
 *
 * Prints "tid <tid> rc <0 or -errno>" for the thread, then waits for a line on stdin. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>

#include "claim2core_role.h"

static const char* role;
static pthread_barrier_t ready;

static void* decode_loop(void* arg) {
  char reply[C2C_ROLE_MAX_LINE + 1] = "";
  int rc;
  (void)arg;
  prctl(PR_SET_NAME, "c2c-c-self", 0, 0, 0);
  rc = c2c_register_role_for(NULL, 0, role, reply, sizeof reply); /* c2c_register_role(role) plus the reply */
  printf("tid %ld rc %d reply %s\n", (long)syscall(SYS_gettid), rc, reply);
  fflush(stdout);
  pthread_barrier_wait(&ready);
  pthread_barrier_wait(&ready); /* until main is told to stop */
  return NULL;
}

int main(int argc, char** argv) {
  pthread_t t;
  char line[16];
  role = argc > 1 ? argv[1] : "decode";
  pthread_barrier_init(&ready, NULL, 2);
  if (pthread_create(&t, NULL, decode_loop, NULL) != 0) return 1;
  pthread_barrier_wait(&ready);
  if (!fgets(line, sizeof line, stdin)) line[0] = '\0';
  pthread_barrier_wait(&ready);
  pthread_join(t, NULL);
  return 0;
}
