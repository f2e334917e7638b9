// What py-setproctitle (the library stock vLLM titles its processes with) does on Linux, for the
// guest's C++ vLLM stand-in (vllm_standin.cpp): the guest's initramfs has no Python.
#pragma once

#include <string>

namespace c2c::vllm {

// Call once, first thing in main, with main's argc/argv (setproctitle's spt_setup): moves environ's
// strings out of the area the kernel reports as the command line, so that set_process_title may
// overwrite it.
void init_process_title(int argc, char** argv);

// setproctitle.setproctitle(title) on Linux: the argv area holds the title followed by NULs (so
// /proc/<pid>/cmdline reads it as argv[0], truncated to the area's size), and
// prctl(PR_SET_NAME) renames the calling thread only (comm: the first 15 bytes). Threads started
// afterwards by this thread inherit that comm; threads started before keep theirs.
void set_process_title(const std::string& title);

// The calling thread's comm (prctl(PR_SET_NAME)), as an interpreter or libzmq names its threads.
void set_thread_name(const std::string& name);

}  // namespace c2c::vllm
