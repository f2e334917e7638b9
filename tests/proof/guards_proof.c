/* The translation unit Frama-C/WP proves: the scheduler's guards (bpf/c2c_guards.h), unchanged. */
#include "c2c_guards.h"
