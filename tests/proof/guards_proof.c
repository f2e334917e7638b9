/*
 * The translation unit Frama-C/WP proves: the scheduler's guards (bpf/c2c_guards.h), unchanged,
 * with their tunables as the scheduler has them: globals the loader sets (C2C_TUNABLES_IN_RODATA).
 * Declared `const` and left without a value, so each goal is proved for every value the contracts'
 * c2c_tunables_ok admits, not for the defaults alone. Not `volatile` as in the scheduler: WP would
 * read a volatile anew at each access, while the scheduler's .rodata is frozen before its programs
 * load, so each read there gives the one value `const` stands for here.
 */
#define C2C_TUNABLES_IN_RODATA
#define C2C_TUNABLE_QUAL const
#include "c2c_guards.h"
