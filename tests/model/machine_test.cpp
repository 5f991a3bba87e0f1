// The machine fingerprint of a profile (model/profile/machine_fingerprint.hpp) and the rule that
// says whether a profile describes this machine (model/profile/machine_match.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/error.hpp"
#include "model/profile/machine_fingerprint.hpp"
#include "model/profile/machine_match.hpp"
#include "model/profile/profile.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

MachineFingerprint sample() {
  MachineFingerprint m;
  m.host = "vm";
  m.date = "2026-12-04T09:41:07Z";
  m.cpu_model = "AMD EPYC";
  m.logical_cpus = 4;
  m.affinity_cpus = 4;
  m.cpu_quota_cores = 2.0;
  m.cpu_quota_source = "cgroup v2 cpu.max";
  m.usable_cores = 2.0;
  m.memory_bytes = 25275953152.0;
  m.memory_limit_bytes = 8.0 * (1 << 30);
  m.kernel = "6.18.44";
  m.libraries = {{"openblas", "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64"},
                 {"gloo", "0.5.0"},
                 {"compiler", "gcc 12.2.0"}};
  return m;
}

// The smallest valid profile with a machine section.
json profile_with(const json& machine) {
  json d = {{"format", "ddpsim-profile"}, {"format_version", 1}};
  if (!machine.is_null()) d["machine"] = machine;
  return d;
}

TEST(MachineFingerprint, RoundTripsThroughTheProfileReader) {
  const MachineFingerprint m = sample();
  const Profile p = Profile::from_json(profile_with(to_json(m)), "p.json");
  const std::optional<MachineFingerprint> r = machine_from_json(p.document());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->host, m.host);
  EXPECT_EQ(r->date, m.date);
  EXPECT_EQ(r->cpu_model, m.cpu_model);
  EXPECT_EQ(r->logical_cpus, 4);
  EXPECT_EQ(r->affinity_cpus, 4);
  EXPECT_EQ(r->cpu_quota_cores, 2.0);
  EXPECT_EQ(r->cpu_quota_source, m.cpu_quota_source);
  EXPECT_EQ(r->usable_cores, 2.0);
  EXPECT_EQ(r->memory_bytes, m.memory_bytes);
  EXPECT_EQ(r->memory_limit_bytes, m.memory_limit_bytes);
  EXPECT_EQ(r->kernel, m.kernel);
  EXPECT_EQ(r->libraries, m.libraries);
  EXPECT_TRUE(compare_machines(r, m).same_machine());
  EXPECT_TRUE(compare_machines(r, m).warnings.empty());

  // No quota and no memory limit: the keys are absent and read back as none.
  MachineFingerprint u = m;
  u.cpu_quota_cores.reset();
  u.memory_limit_bytes.reset();
  const json j = to_json(u);
  EXPECT_FALSE(j.contains("cpu_quota_cores"));
  EXPECT_FALSE(j.contains("memory_limit_bytes"));
  const auto back = machine_from_json(Profile::from_json(profile_with(j), "p.json").document());
  EXPECT_FALSE(back->cpu_quota_cores.has_value());
  EXPECT_FALSE(back->memory_limit_bytes.has_value());

  // A profile without the section reads, as an unknown machine.
  EXPECT_FALSE(machine_from_json(Profile::from_json(profile_with(nullptr), "p.json").document()));
}

TEST(MachineFingerprint, StrictKeys) {
  json j = to_json(sample());
  j["cpu_modle"] = "typo";
  try {
    (void)Profile::from_json(profile_with(j), "p.json");
    ADD_FAILURE() << "an unknown key: expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "p.json");
    EXPECT_EQ(e.pointer(), "/machine/cpu_modle");
  }
  j = to_json(sample());
  j.erase("usable_cores");
  try {
    (void)Profile::from_json(profile_with(j), "p.json");
    ADD_FAILURE() << "no usable_cores: expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/machine/usable_cores");
  }
  j = to_json(sample());
  j["usable_cores"] = "two";
  EXPECT_THROW((void)Profile::from_json(profile_with(j), "p.json"), InputError);
}

TEST(MachineFingerprint, CgroupParsers) {
  EXPECT_EQ(detail::parse_cpu_max("150000 100000"), 1.5);
  EXPECT_EQ(detail::parse_cpu_max("200000 100000\n"), 2.0);
  EXPECT_FALSE(detail::parse_cpu_max("max 100000"));
  EXPECT_FALSE(detail::parse_cpu_max(""));
  EXPECT_EQ(detail::parse_cfs_quota("50000", "100000"), 0.5);
  EXPECT_FALSE(detail::parse_cfs_quota("-1", "100000"));
  EXPECT_FALSE(detail::parse_cfs_quota("", ""));
  EXPECT_EQ(detail::parse_memory_limit("1073741824"), 1073741824.0);
  EXPECT_FALSE(detail::parse_memory_limit("max"));
  EXPECT_FALSE(detail::parse_memory_limit("9223372036854771712"));  // v1 "unlimited"
}

class FakeRoot {
 public:
  FakeRoot() {
    path_ = std::filesystem::temp_directory_path() /
            ("ddpsim-machine-test-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~FakeRoot() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel) << text;
  }
  std::string at(const std::string& rel) const { return (path_ / rel).string(); }

 private:
  std::filesystem::path path_;
};

TEST(MachineFingerprint, ProbesCgroupV2QuotaAndMemoryOfItsOwnCgroup) {
  FakeRoot r;
  r.write("proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU 1\nprocessor\t: 1\n");
  r.write("proc/meminfo", "MemTotal:       1000 kB\nMemFree: 5 kB\n");
  r.write("proc/self/cgroup", "0::/job/step\n");
  r.write("cg/cgroup.controllers", "cpu memory\n");
  r.write("cg/job/cpu.max", "50000 100000\n");  // the parent's half core applies
  r.write("cg/job/step/cpu.max", "max 100000\n");
  r.write("cg/job/step/memory.max", "2097152\n");
  const MachineFingerprint m = probe_machine({r.at("proc"), r.at("cg")});
  EXPECT_EQ(m.cpu_model, "Test CPU 1");
  EXPECT_EQ(m.memory_bytes, 1000.0 * 1024);
  EXPECT_EQ(m.cpu_quota_cores, 0.5);
  EXPECT_EQ(m.cpu_quota_source, "cgroup v2 cpu.max");
  EXPECT_EQ(m.usable_cores, 0.5);  // min(affinity >= 1, 0.5)
  EXPECT_EQ(m.memory_limit_bytes, 2097152.0);
}

TEST(MachineFingerprint, ProbesCgroupV1CfsQuota) {
  FakeRoot r;
  r.write("proc/cpuinfo", "model name\t: Test CPU 2\n");
  r.write("proc/self/cgroup", "4:memory:/c1\n2:cpu,cpuacct:/c1\n0::/\n");
  r.write("cg/cpu,cpuacct/c1/cpu.cfs_quota_us", "100000\n");
  r.write("cg/cpu,cpuacct/c1/cpu.cfs_period_us", "100000\n");
  r.write("cg/memory/c1/memory.limit_in_bytes", "9223372036854771712\n");
  const MachineFingerprint m = probe_machine({r.at("proc"), r.at("cg")});
  EXPECT_EQ(m.cpu_quota_cores, 1.0);
  EXPECT_EQ(m.cpu_quota_source, "cgroup v1 cpu.cfs_quota_us");
  EXPECT_EQ(m.usable_cores, 1.0);
  EXPECT_FALSE(m.memory_limit_bytes.has_value());
}

TEST(MachineFingerprint, ProbesThisMachine) {
  const MachineFingerprint m = probe_machine();
  EXPECT_GT(m.logical_cpus, 0);
  EXPECT_GT(m.usable_cores, 0);
  EXPECT_LE(m.usable_cores, m.logical_cpus);
  EXPECT_FALSE(m.kernel.empty());
  EXPECT_EQ(m.libraries.count("compiler"), 1u);
  EXPECT_TRUE(compare_machines(m, probe_machine()).same_machine());
}

// ---- the comparison rule ------------------------------------------------------------------

TEST(MachineMatch, EqualFingerprintsMatchWithoutWarnings) {
  const MachineMatch r = compare_machines(sample(), sample());
  EXPECT_TRUE(r.same_machine());
  EXPECT_TRUE(r.warnings.empty());
}

TEST(MachineMatch, ADifferentCpuIsAnotherMachine) {
  MachineFingerprint here = sample();
  here.cpu_model = "Intel Xeon";
  const MachineMatch r = compare_machines(sample(), here);
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].field, "cpu_model");
  EXPECT_EQ(r.mismatches[0].profile, "\"AMD EPYC\"");
  EXPECT_EQ(r.mismatches[0].here, "\"Intel Xeon\"");
  EXPECT_EQ(describe(r.mismatches[0]),
            "cpu_model: profile \"AMD EPYC\", this machine \"Intel Xeon\"");
}

TEST(MachineMatch, ADifferentCgroupQuotaIsAnotherMachine) {
  MachineFingerprint here = sample();
  here.cpu_quota_cores = 1.5;
  here.usable_cores = 1.5;
  const MachineMatch r = compare_machines(sample(), here);
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].field, "usable_cores");
  EXPECT_EQ(r.mismatches[0].profile, "2");
  EXPECT_EQ(r.mismatches[0].here, "1.5");
  // More logical CPUs behind the same quota: the same usable cores, a warning only.
  here = sample();
  here.logical_cpus = 64;
  const MachineMatch w = compare_machines(sample(), here);
  EXPECT_TRUE(w.same_machine());
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_EQ(w.warnings[0].field, "logical_cpus");
}

TEST(MachineMatch, AMissingSectionIsAnUnknownMachine) {
  const MachineMatch r = compare_machines(std::nullopt, sample());
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].field, "machine");
  EXPECT_NE(r.mismatches[0].here.find("AMD EPYC"), std::string::npos);
}

TEST(MachineMatch, LibraryVersionsByNumber) {
  // The profile keeps OpenBLAS's build string, a build knows its header's version: equal
  // version numbers match.
  MachineFingerprint here = sample();
  here.libraries["openblas"] = "0.3.21";
  EXPECT_TRUE(compare_machines(sample(), here).same_machine());
  here.libraries["openblas"] = "0.3.26";
  MachineMatch r = compare_machines(sample(), here);
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].field, "libraries/openblas");
  // Another Gloo: another measurement.
  here = sample();
  here.libraries["gloo"] = "0.6.0";
  EXPECT_EQ(compare_machines(sample(), here).mismatches.at(0).field, "libraries/gloo");
  // A library the profile used and this build lacks, and another compiler: warnings. One the
  // profile did not use (nccl beside a CPU calibration): not compared.
  here = sample();
  here.libraries.erase("gloo");
  here.libraries["nccl"] = "2.28.9";
  here.libraries["compiler"] = "gcc 13.1.0";
  r = compare_machines(sample(), here);
  EXPECT_TRUE(r.same_machine());
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_EQ(r.warnings[0].field, "libraries/compiler");
  EXPECT_EQ(r.warnings[1].field, "libraries/gloo");
  EXPECT_EQ(r.warnings[1].here, "none (not built)");
}

TEST(MachineMatch, KernelMemoryAndAgeOnlyWarn) {
  MachineFingerprint here = sample();
  here.kernel = "6.19.0";
  here.memory_bytes *= 2;
  here.memory_limit_bytes.reset();
  here.host = "other";
  here.date = "2027-01-20T00:00:00Z";  // 47 days later
  const MachineMatch r = compare_machines(sample(), here);
  EXPECT_TRUE(r.same_machine());
  std::vector<std::string> fields;
  for (const MachineDifference& d : r.warnings) fields.push_back(d.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"host", "memory_bytes", "memory_limit_bytes",
                                              "kernel", "date"}));
  EXPECT_NE(r.warnings.back().profile.find("47 days old"), std::string::npos)
      << r.warnings.back().profile;
  // Within kMaxProfileAgeDays and within 1% of the memory: nothing to say.
  here = sample();
  here.date = "2026-12-30T00:00:00Z";
  here.memory_bytes *= 1.005;
  EXPECT_TRUE(compare_machines(sample(), here).warnings.empty());
}

}  // namespace
}  // namespace ddpsim::model
