// Names from the host are bytes (spec/state-machine.md, "Names are bytes"): a thread's comm
// (prctl PR_SET_NAME), a process title (argv[0], setproctitle) and a cgroup path may hold any
// byte but NUL, valid UTF-8 or not. The core keeps them as they are; what people and regexes see
// of them is defined here, once, for every front end (CLI, REST, traces, the core's own texts).
#pragma once

#include <re2/re2.h>

#include <string>
#include <string_view>

namespace c2c {

// Whether `bytes` is well-formed UTF-8 (no overlong forms, surrogates or code points above
// U+10FFFF).
bool is_utf8(std::string_view bytes);

// The text of a name: `bytes` itself when it is UTF-8, else each maximal ill-formed subsequence
// replaced by U+FFFD (Unicode's "maximal subpart" practice, as ICU, WHATWG and Python's
// errors="replace" do). Always valid UTF-8: what JSON and YAML outputs print, and what a
// commandRegex, processRegex, comm_regex or title_regex is matched against.
std::string name_text(std::string_view bytes);

// RE2::PartialMatch of `re` (a UTF-8 pattern) on name_text(name): allocates only for a name that
// is not UTF-8.
bool name_matches(std::string_view name, const RE2& re);

// A name as one cell of a terminal table: the bytes of each ill-formed subsequence and of every
// control character (C0, DEL, C1) and of the bidirectional/line-separator format characters
// (U+200E/F, U+2028-U+202E, U+2066-U+2069) as \xNN, lower-case hex; everything else as it is.
// So a name can neither move the cursor, nor end a row or add a column (tab, newline), nor
// reorder what follows it on the line.
std::string terminal_text(std::string_view bytes);

// How an error message quotes input it refuses (a label key, a name, a field of a request): the
// first kEchoBytes bytes of it (cut at a character boundary) and "... (N bytes)" when it is longer,
// as text (name_text). A 10 KB key echoed in full made the gRPC status exceed the client's
// metadata limit, so the client saw RESOURCE_EXHAUSTED instead of the reason.
inline constexpr size_t kEchoBytes = 64;
std::string echo(std::string_view input);

// How many terminal columns terminal_text's result takes, counted as code points (what aligns a
// table of Latin, Cyrillic or Greek names; wide CJK characters take two and are not counted so).
size_t terminal_width(std::string_view text);

}  // namespace c2c
