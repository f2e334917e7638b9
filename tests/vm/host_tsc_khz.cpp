// c2c-host-tsc-khz: prints the host's TSC rate in kHz (one number), for the guest's
// tsc_early_khz= parameter.
//
// Why: under qemu TCG the guest's TSC is the host's TSC (plus an offset), but the guest kernel
// cannot measure its rate: it has no HPET or PM timer to calibrate against, and its PIT
// calibration fails when the host is busy. It then marks the TSC unstable and falls back to the
// jiffies clocksource, so every clock read and every timer is 1 ms coarse. Telling it the rate
// fixes that (run-guest.sh).
//
// Method: TSC ticks against CLOCK_MONOTONIC_RAW over several 40 ms windows; the median window
// wins, so one window stretched by the host descheduling us between the two reads is ignored.
// Exit status 1 (nothing printed) if the CPU has no invariant-looking TSC (not x86-64).
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace {

uint64_t raw_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace

int main() {
#if defined(__x86_64__)
  constexpr int kWindows = 7;
  constexpr uint64_t kWindowNs = 40'000'000;
  std::vector<double> khz;
  for (int i = 0; i < kWindows; ++i) {
    const uint64_t t0 = raw_ns();
    const uint64_t c0 = __rdtsc();
    uint64_t t1 = t0;
    while ((t1 = raw_ns()) - t0 < kWindowNs) {
    }
    const uint64_t c1 = __rdtsc();
    khz.push_back(static_cast<double>(c1 - c0) * 1e6 / static_cast<double>(t1 - t0));
  }
  std::sort(khz.begin(), khz.end());
  const double median = khz[khz.size() / 2];
  if (median < 100'000.0) return 1;  // < 100 MHz: not a usable TSC
  std::printf("%.0f\n", median);
  return 0;
#else
  return 1;
#endif
}
