# Sourced by run-scenarios.sh (bash): has_target <build dir> <grep regex>: the CMake build dir has a
# target whose `--target help` line matches. grep -c reads all of the list: grep -q stops at the
# first match, cmake then dies of SIGPIPE and `set -o pipefail` turns the match into a miss.
has_target() { cmake --build "$1" --target help 2>/dev/null | grep -c "$2" >/dev/null; }
