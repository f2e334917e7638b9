// c2c-mirror-tool: the mirror library from a shell.
//   open     create or re-open (and verify) the pinned map set
//   apply    write a synthetic table (from --seed) through read-back, diff and apply
//   dump     print the policy map's entries
//   destroy  unlink the pins
// The crash test runs `apply` and kills it with SIGKILL at random moments.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "mirror/applier.hpp"
#include "mirror/generation_store.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/pinned_maps.hpp"
#include "mirror/synthetic.hpp"

using namespace c2c::mirror;

namespace {

int open_cmd(const PinOptions& opts) {
  auto maps = PinnedMaps::open(opts);
  if (!maps) {
    std::cerr << "c2c-mirror-tool: " << maps.error() << "\n";
    return 1;
  }
  std::printf("%s %s (policy max_entries %u)\n", maps.value()->created() ? "created" : "re-opened",
              opts.pin_root.c_str(), maps.value()->policy_max_entries());
  return 0;
}

int dump_cmd(const PinOptions& opts) {
  auto maps = PinnedMaps::open(opts);
  if (!maps) {
    std::cerr << "c2c-mirror-tool: " << maps.error() << "\n";
    return 1;
  }
  KernelPolicyMap map(maps.value()->policy_fd(), maps.value()->policy_max_entries(), maps.value()->compare_delete());
  Applier applier(map);
  auto actual = applier.read_actual();
  if (!actual) {
    std::cerr << "c2c-mirror-tool: " << actual.error() << "\n";
    return 1;
  }
  for (const auto& w : actual->warnings) std::cerr << "warning: " << w << "\n";
  for (const auto& e : actual->entries)
    std::printf("%u start=%llu gen=%llu class=%u flags=0x%x allowed=%s\n", e.tid,
                static_cast<unsigned long long>(e.value.start), static_cast<unsigned long long>(e.value.generation),
                static_cast<unsigned>(e.value.exec_class), e.value.flags, e.value.allowed.to_string().c_str());
  std::printf("entries %zu\n", actual->entries.size());
  return 0;
}

struct ApplyArgs {
  std::string gen_file;
  uint64_t seed = 1;
  uint32_t entries = 1000;
  bool loading = false;
  size_t batch_size = 8192;
  uint64_t lease = 16;
};

int apply_cmd(const PinOptions& opts, const ApplyArgs& a) {
  auto maps = PinnedMaps::open(opts);
  if (!maps) {
    std::cerr << "c2c-mirror-tool: " << maps.error() << "\n";
    return 1;
  }
  auto lease = GenerationLease::open(a.gen_file, a.lease);
  if (!lease) {
    std::cerr << "c2c-mirror-tool: " << lease.error() << "\n";
    return 1;
  }
  auto gen = lease->next();  // durable before any value carrying it is written
  if (!gen) {
    std::cerr << "c2c-mirror-tool: " << gen.error() << "\n";
    return 1;
  }
  std::printf("generation %llu\n", static_cast<unsigned long long>(gen.value()));
  std::fflush(stdout);

  KernelPolicyMap map(maps.value()->policy_fd(), maps.value()->policy_max_entries(), maps.value()->compare_delete());
  ApplyOptions ao;
  ao.batch_size = a.batch_size;
  Applier applier(map, ao);
  auto actual = applier.read_actual();
  if (!actual) {
    std::cerr << "c2c-mirror-tool: " << actual.error() << "\n";
    return 1;
  }
  const DesiredTable desired = synthetic_table(a.seed, a.entries, gen.value());
  const c2c::Plan plan = diff_plan(desired, actual->entries, a.loading);
  // The crash test waits for this line, then kills us at a random moment of the apply.
  std::printf("apply-start %zu\n", plan.ops.size());
  std::fflush(stdout);
  ApplyReport rep = applier.apply(plan);
  std::printf("ops %zu applied %zu absent %zu skipped %zu failed %zu rolled_back %zu deferred %zu batched %d\n",
              rep.ops.size(), rep.applied, rep.absent, rep.skipped, rep.failed, rep.rolled_back, rep.deferred.size(),
              rep.batched ? 1 : 0);
  std::fflush(stdout);  // the crash test tells "finished before the kill" from this line
  size_t shown = 0;
  for (const auto& s : rep.ops) {
    if (s.success() || ++shown > 10) continue;
    std::printf("  %s\n", describe(s).c_str());
  }
  if (!rep.error.empty()) std::fprintf(stderr, "c2c-mirror-tool: %s\n", rep.error.c_str());
  return rep.ok() ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Claim2Core mirror tool: the pinned policy maps from a shell"};
  app.require_subcommand(1);
  PinOptions opts;
  app.add_option("--pin-root", opts.pin_root, "bpffs directory holding the pins")->capture_default_str();
  app.add_option("--object", opts.object_path, "policy_maps.bpf.o (to create missing maps)")->capture_default_str();
  app.add_option("--max-entries", opts.policy_max_entries, "policy map size when creating it")->capture_default_str();

  auto* open = app.add_subcommand("open", "create or re-open and verify the pinned maps");
  auto* dump = app.add_subcommand("dump", "print the policy map");
  auto* destroy = app.add_subcommand("destroy", "unlink the pins");
  auto* apply = app.add_subcommand("apply", "reconcile the map to a synthetic table");
  ApplyArgs a;
  apply->add_option("--gen-file", a.gen_file, "durable generation file")->required();
  apply->add_option("--seed", a.seed, "table seed")->capture_default_str();
  apply->add_option("--entries", a.entries, "table size")->capture_default_str();
  apply->add_option("--batch-size", a.batch_size, "keys per batch call")->capture_default_str();
  apply->add_option("--lease", a.lease, "generation lease size")->capture_default_str();
  apply->add_flag("--loading", a.loading, "desired state still loading: defer deletes");
  CLI11_PARSE(app, argc, argv);

  if (*open) return open_cmd(opts);
  if (*dump) return dump_cmd(opts);
  if (*apply) return apply_cmd(opts, a);
  if (*destroy) {
    std::string e = PinnedMaps::remove_pins(opts.pin_root);
    if (!e.empty()) {
      std::cerr << "c2c-mirror-tool: " << e << "\n";
      return 1;
    }
    return 0;
  }
  return 1;
}
