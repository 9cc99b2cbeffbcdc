// measure::GpuWatch and the GPU half of core/stability.h, on a fake GpuMonitor (the driver's
// answers scripted: expected clock, throttle reasons, processes, the energy counter) and fake
// device parts: a case whose samples ran throttled, one that shared its GPU, the energy per
// call, and what each says in the results table and the gate's JSON. No GPU needed;
// ci/device-check.sh has the steps that show the same on a real one.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness/core/metric_names.h"
#include "harness/core/stability.h"
#include "harness/gate/clock_policy.h"
#include "harness/gate/compare.h"
#include "harness/measure/device_timer.h"
#include "harness/measure/engine.h"
#include "harness/measure/gpu_monitor.h"
#include "harness/report/results.h"
#include "harness/report/verdicts.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {

constexpr std::uint32_t kOwnPid = 500;
constexpr std::uint64_t kIdle = 0x1, kSetting = 0x2, kPowerCap = 0x4, kThermal = 0x20;

// The driver's answers, one per reading in order (the last repeats).
struct FakeGpu final : measure::GpuMonitor {
  std::optional<double> expected = 1980;
  std::vector<std::optional<std::uint64_t>> reasons{std::uint64_t{0}};
  std::vector<std::optional<std::vector<measure::GpuProcess>>> processes_seen{
      std::vector<measure::GpuProcess>{{kOwnPid, "attnprof-worker", false}}};
  std::vector<std::optional<double>> energy{std::nullopt};
  int reads = 0;

  template <class T>
  static T at(const std::vector<T>& v, int i) {
    return v[std::min<std::size_t>(static_cast<std::size_t>(i), v.size() - 1)];
  }
  std::optional<double> expected_sm_clock_mhz() override { return expected; }
  // Where set, the reasons by the count of calls instead (the readings at either end and those
  // while calls run, in order; the last repeats).
  std::vector<std::optional<std::uint64_t>> reasons_by_call;
  int reason_calls = 0;
  std::optional<std::uint64_t> throttle_reasons() override {
    ++reason_calls;
    return reasons_by_call.empty() ? at(reasons, reads) : at(reasons_by_call, reason_calls - 1);
  }
  std::optional<std::vector<measure::GpuProcess>> processes() override {
    return at(processes_seen, reads);
  }
  std::optional<double> energy_mj() override { return at(energy, reads++); }
  ClockPolicy policy{1980.0, 1980.0, true};
  ClockPolicy clock_policy() override { return policy; }
  // Per reading, in order (the last repeats): the device's utilization and each process's SM
  // activity since the time asked, which is kept.
  std::vector<std::optional<double>> utilization{std::nullopt};
  std::vector<std::optional<std::map<std::uint32_t, double>>> activity{std::nullopt};
  std::vector<std::int64_t> asked_since;
  std::optional<double> utilization_pct() override {
    return at(utilization, static_cast<int>(asked_since.size()));
  }
  std::optional<double> temperature = 71;
  std::optional<double> temperature_c() override { return temperature; }
  std::optional<std::map<std::uint32_t, double>> sm_activity(std::int64_t since_us) override {
    asked_since.push_back(since_us);
    return at(activity, static_cast<int>(asked_since.size()) - 1);
  }
};

std::vector<measure::GpuProcess> alone() {
  return {{kOwnPid, "attnprof-worker", false}};
}

// A device whose calls take 2 ms by the events, with an SM clock per call from `clock`.
struct Device {
  std::function<double(int)> clock = [](int) { return 1980.0; };
  int clocks = 0;
};

struct Events final : measure::Events {
  void wait_idle() override {}
  void wait_device() override {}
  void record_start() override {}
  void record_stop() override {}
  std::int64_t elapsed_ns() override { return 2'000'000; }
};
struct Flush final : measure::L2Flush {
  void flush() override {}
};
struct Blocker final : measure::BlockingKernel {
  void block(double) override {}
  void release() noexcept override {}
  bool timed_out() const override { return false; }
};
struct Clock final : measure::ClockReader {
  Device& d;
  explicit Clock(Device& dev) : d(dev) {}
  std::optional<double> sm_clock_mhz() override { return d.clock(d.clocks++); }
};
// Hands the timer a fake GpuMonitor it does not own: the test keeps reading it.
struct Borrowed final : measure::GpuMonitor {
  FakeGpu& g;
  explicit Borrowed(FakeGpu& gpu) : g(gpu) {}
  std::optional<double> expected_sm_clock_mhz() override { return g.expected_sm_clock_mhz(); }
  std::optional<std::uint64_t> throttle_reasons() override { return g.throttle_reasons(); }
  std::optional<std::vector<measure::GpuProcess>> processes() override { return g.processes(); }
  std::optional<double> energy_mj() override { return g.energy_mj(); }
  ClockPolicy clock_policy() override { return g.clock_policy(); }
  std::optional<double> utilization_pct() override { return g.utilization_pct(); }
  std::optional<double> temperature_c() override { return g.temperature_c(); }
  std::optional<std::map<std::uint32_t, double>> sm_activity(std::int64_t since_us) override {
    return g.sm_activity(since_us);
  }
};

measure::DeviceParts parts(Device& d, FakeGpu* gpu) {
  measure::DeviceParts p;
  p.call = [] {};
  p.events = std::make_unique<Events>();
  p.flush = std::make_unique<Flush>();
  p.blocker = std::make_unique<Blocker>();
  p.clock = std::make_unique<Clock>(d);
  if (gpu) p.monitor = std::make_unique<Borrowed>(*gpu);
  p.own_pid = kOwnPid;
  return p;
}

measure::DeviceTimerOptions events_only() {
  measure::DeviceTimerOptions o;
  o.cupti = false;
  return o;
}

// A GPU case measured as the worker measures it: `n` samples from the timer, summarized by the
// engine, the timer's metrics and notes after finish(), the stability figures stored beside
// them (worker/runner/runner.cpp's order).
core::CaseResult measured(measure::DeviceTimer& t, int n) {
  core::CaseResult r;
  r.spec.key = "llama-2-7b/prefill/b1-s4096-bf16-causal/sdpa.flash";
  r.spec.kernel = "sdpa.flash";
  r.spec.hardware.device = "cuda";
  r.status = core::CaseStatus::ok;
  r.reference = "sdpa.math";
  for (int i = 0; i < n; ++i) r.samples.push_back(t.sample());
  r.summary = measure::summarize(r.samples, r.spec.measure);
  r.summary.converged = true;
  t.finish();
  r.metrics = t.metrics();
  for (const auto& note : t.notes()) r.message += (r.message.empty() ? "" : "; ") + note;
  core::add_stability_metrics(core::stability(r), r.metrics);
  return r;
}

}  // namespace

TEST_SUITE("measure::GpuWatch") {
  TEST_CASE("other processes: this worker and its ab partner are not others; host pids are said") {
    std::vector<measure::GpuProcess> all{{kOwnPid, "attnprof-worker", false},
                                         {501, "attnprof-worker", true},
                                         {4242, "python3", false}};
    measure::OtherProcesses o = measure::other_processes(all, kOwnPid);
    CHECK(o.count == 1);
    CHECK(o.who == "pid 4242 (python3)");
    // In a container NVML lists host pids, ours among them under another number.
    o = measure::other_processes({{90001, ""}, {90002, ""}}, kOwnPid);
    CHECK(o.count == 1);
    CHECK(o.who ==
          "pid 90001 (name not visible), pid 90002 (name not visible) (host pids; one of them is "
          "this worker)");
    o = measure::other_processes({{90001, ""}}, kOwnPid);
    CHECK(o.count == 0);
    CHECK(o.who.empty());
    // With activity read: this worker is an active one where it ran something in the window
    // (its samples), an idle one where it did not (before its first case), so that a busy
    // neighbour is never taken for it.
    const std::vector<measure::GpuProcess> host{{90001, ""}, {90002, ""}};
    const std::map<std::uint32_t, double> one_busy{{90002, 60}};
    o = measure::other_processes(host, kOwnPid, &one_busy, false);
    CHECK(o.count == 1);
    CHECK(o.who == "pid 90002 (name not visible) at up to 60% SM (host pids)");
    CHECK(o.idle == 0);
    o = measure::other_processes(host, kOwnPid, &one_busy, true);
    CHECK(o.count == 0);
    CHECK(o.idle == 1);
    // Not active, and no idle one to be: then it is the active one after all.
    const std::map<std::uint32_t, double> both_busy{{90001, 50}, {90002, 60}};
    o = measure::other_processes(host, kOwnPid, &both_busy, false);
    CHECK(o.count == 1);
  }

  TEST_CASE("energy per call and average power from the counter's advance over the samples") {
    FakeGpu gpu;
    gpu.energy = {1'000'000.0, 1'150'000.0};  // 150 J between the readings
    measure::GpuWatch w(gpu, kOwnPid);
    w.begin(0, 0);
    w.end(500'000'000, 1, 1000);  // 0.5 s, 1000 calls
    const auto m = w.metrics();
    CHECK(m.at(core::kEnergyPerCallMetric) == doctest::Approx(0.15));
    CHECK(m.at(core::kAveragePowerMetric) == doctest::Approx(300));
    CHECK(m.at(core::kExpectedClockMetric) == 1980);
    CHECK(m.at(core::kOtherProcessesMetric) == 0);
    // The clock policy, for history to compare (gate/clock_policy.h).
    CHECK(m.at(core::kApplicationsClockMetric) == 1980);
    CHECK(m.at(core::kDefaultApplicationsClockMetric) == 1980);
    CHECK(m.at(core::kPersistenceMetric) == 1);
    CHECK(w.notes().empty());
  }

  TEST_CASE("no energy figure from a window shorter than the counter's steps, nor without it") {
    FakeGpu gpu;
    gpu.energy = {1'000'000.0, 1'000'400.0};
    measure::GpuWatch w(gpu, kOwnPid);
    w.begin(0, 0);
    w.end(40'000'000, 1, 20);
    CHECK(w.metrics().count(core::kEnergyPerCallMetric) == 0);
    CHECK(w.notes() == std::vector<std::string>{"no energy per call: the samples took 40 ms, "
                                                "less than the 100 ms NVML's energy counter "
                                                "needs"});
    FakeGpu older;  // before Volta: no counter, and nothing said of it
    measure::GpuWatch v(older, kOwnPid);
    v.begin(0, 0);
    v.end(500'000'000, 1, 1000);
    CHECK(v.metrics().count(core::kAveragePowerMetric) == 0);
    CHECK(v.notes().empty());
  }

  TEST_CASE("reasons read while calls run: a power cap both ends missed, at most every 10 ms") {
    FakeGpu gpu;
    gpu.reasons_by_call = {kIdle, kPowerCap, kIdle};
    measure::GpuWatch w(gpu, kOwnPid);
    w.begin(0, 0);
    w.during_call(1'000'000);   // read: the calls ran power capped
    w.during_call(6'000'000);   // 5 ms later: not read
    w.during_call(11'000'001);  // 10 ms after the read: read (idle by now)
    w.end(20'000'000, 1, 3);
    CHECK(gpu.reason_calls == 4);
    CHECK(w.metrics().at(core::kThrottleReasonsMetric) == static_cast<double>(kPowerCap));
    // Not readable at any time: no figure, rather than a mask of 0 that says "none".
    FakeGpu blind;
    blind.reasons = {std::nullopt};
    measure::GpuWatch b(blind, kOwnPid);
    b.begin(0, 0);
    b.during_call(1'000'000);
    b.end(20'000'000, 1, 1);
    CHECK(b.metrics().count(core::kThrottleReasonsMetric) == 0);
    // Through the timer: each sample's call reads them while it runs, and so a case whose
    // samples ran throttled names the power cap though the driver said idle at either end.
    Device d;
    d.clock = [](int i) { return i % 100 < 38 ? 1410.0 : 1980.0; };
    FakeGpu capped;
    capped.reasons_by_call = {kIdle, kPowerCap, kIdle};
    measure::DeviceTimer t(parts(d, &capped), events_only());
    const core::Stability st = core::stability(measured(t, 100));
    CHECK(st.note ==
          "unstable: throttled: SM clock 1,410 of 1,980 MHz in 38% of samples; power cap");
  }

  TEST_CASE("throttle reasons at either end are kept, the idle bit left out") {
    FakeGpu gpu;
    gpu.reasons = {kIdle, kPowerCap | kThermal};
    measure::GpuWatch w(gpu, kOwnPid);
    w.begin(0, 0);
    w.end(1'000'000'000, 1, 10);
    const double mask = w.metrics().at(core::kThrottleReasonsMetric);
    CHECK(mask == static_cast<double>(kPowerCap | kThermal));
    CHECK(core::throttle_reason_names(static_cast<std::uint64_t>(mask)) ==
          "power cap, software thermal slowdown");
  }
}

TEST_SUITE("measure::DeviceTimer with a GpuMonitor") {
  TEST_CASE("a case whose samples ran throttled: kept, counted, unstable with clock and reason") {
    Device d;
    // 38 of every 100 calls at 1,410 MHz (power capped), the rest at 1,980.
    d.clock = [](int i) { return i % 100 < 38 ? 1410.0 : 1980.0; };
    FakeGpu gpu;
    gpu.reasons = {std::uint64_t{0}, kPowerCap};
    gpu.energy = {1'000'000.0, 1'000'000.0 + 0.7 * 1e3 * 105};  // 0.7 J per call (105 calls)
    measure::DeviceParts p = parts(d, &gpu);
    // Each call at least 1 ms of the host's time: the samples span more than the 100 ms the
    // energy counter needs, however fast this machine.
    p.call = [] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
    measure::DeviceTimer t(std::move(p), events_only());
    core::CaseResult r = measured(t, 100);
    // Kept: every sample is in the record with its clock.
    CHECK(r.samples.size() == 100);
    const core::Stability st = core::stability(r);
    CHECK(st.clocked == 100);
    CHECK(st.throttled == 38);  // the probe's 5 calls took clocks 0-4, the samples 5-104
    CHECK(r.metrics.at(core::kThrottledMetric) == doctest::Approx(0.38));
    CHECK(st.unstable);
    const std::string note =
        "unstable: throttled: SM clock 1,410 of 1,980 MHz in 38% of samples; power cap";
    CHECK(st.note == note);
    // The results table's note for the case: first of everything it says, then what a call
    // cost (its watts are the host's sleeps', not asserted).
    const std::string shown = report::case_note(r, false);
    CHECK(shown.rfind(note + "; energy 0.7 J per call at ", 0) == 0);
    core::Run run;
    run.cases.push_back(r);
    CHECK(report::status_counts(run) ==
          "1 cases: 1 ok, 0 failed, 0 skipped, 0 error; 1 unstable: a busy machine or GPU "
          "disturbed them, their figures are not the kernels' (baselines leave them out)");
    // The energy it cost: 5 probe calls and 100 samples between the readings.
    CHECK(r.metrics.at(core::kEnergyPerCallMetric) == doctest::Approx(0.7));
    // compare treats it as a descheduled CPU case: inconclusive, its reason in the JSON.
    gate::Baseline b;
    gate::BaselineCase bc;
    for (int i = 0; i < 100; ++i) bc.samples_ns.push_back(2'000'000 + i);
    bc.median_ns = 2'000'050;
    bc.n = 100;
    b.cases[r.spec.key] = bc;
    const auto v = gate::compare(b, run);
    REQUIRE(v.size() == 1);
    CHECK(v[0].verdict == gate::Verdict::inconclusive);
    CHECK(v[0].unstable == note);
    report::GateReport gr;
    gr.verdicts = v;
    const nlohmann::json j = nlohmann::json::parse(report::json_report(gr));
    CHECK(j["verdicts"][0]["unstable"] == note);
    // At most a tenth throttled: measured as it is.
    Device calm;
    calm.clock = [](int i) { return i < 13 ? 1410.0 : 1980.0; };  // 8 of 100 samples
    FakeGpu gpu2;
    measure::DeviceTimer t2(parts(calm, &gpu2), events_only());
    CHECK_FALSE(core::stability(measured(t2, 100)).unstable);
  }

  TEST_CASE("clocks a user locked below the boost clock are a policy, recorded, not throttling") {
    // nvidia-smi -lgc 1200 on a GPU that boosts to 1,980: every sample at 1,200 MHz, and the
    // driver names the clock setting as the only reason.
    Device d;
    d.clock = [](int) { return 1200.0; };
    FakeGpu gpu;
    gpu.reasons = {kIdle | kSetting, kSetting};
    measure::DeviceTimer t(parts(d, &gpu), events_only());
    core::CaseResult r = measured(t, 100);
    core::Stability st = core::stability(r);
    CHECK_FALSE(st.unstable);
    CHECK(st.throttled == 0);
    CHECK(st.held_clock_mhz == 1200);
    CHECK(r.metrics.at(core::kHeldClockMetric) == 1200);
    CHECK(r.metrics.at(core::kThrottledMetric) == 0);
    // In the clock policy history compares: a run before the lock is under another policy.
    CHECK(gate::clock_policy(r.metrics) ==
          "default clocks, SM clock held by a user setting (nvidia-smi -lgc), persistence on");
    // Below the held clock, a sample is throttled as ever: judged against 1,200.
    Device dips;
    dips.clock = [](int i) { return i % 100 < 30 ? 800.0 : 1200.0; };
    FakeGpu gpu2;
    gpu2.reasons = {kSetting};
    measure::DeviceTimer t2(parts(dips, &gpu2), events_only());
    st = core::stability(measured(t2, 100));
    CHECK(st.unstable);
    CHECK(st.note ==
          "unstable: throttled: SM clock 800 of 1,200 MHz in 30% of samples; applications "
          "clocks setting");
    // A power cap beside the setting: the clock was not only the user's choice, so it is
    // judged against the clock the GPU should run at.
    FakeGpu capped;
    capped.reasons = {kSetting | kPowerCap};
    measure::DeviceTimer t3(parts(d, &capped), events_only());
    st = core::stability(measured(t3, 100));
    CHECK(st.unstable);
    CHECK(st.held_clock_mhz == 0);
    CHECK(st.note ==
          "unstable: throttled: SM clock 1,200 of 1,980 MHz in 100% of samples; applications "
          "clocks setting, power cap");
  }

  TEST_CASE("a case that shared its GPU is unstable, its message naming who was there") {
    Device d;
    FakeGpu gpu;
    // Alone before the samples; a python3 process had a context on the GPU at their end.
    gpu.processes_seen = {alone(), std::vector<measure::GpuProcess>{
                                       {kOwnPid, "attnprof-worker", false}, {4242, "python3"}}};
    measure::DeviceTimer t(parts(d, &gpu), events_only());
    core::CaseResult r = measured(t, 20);
    CHECK(r.metrics.at(core::kOtherProcessesMetric) == 1);
    CHECK(r.message == "GPU shared after its samples with pid 4242 (python3)");
    const std::string note = "unstable: its GPU shared with 1 other process";
    CHECK(core::stability(r).note == note);
    CHECK(report::case_note(r, false) ==
          note + "; GPU shared after its samples with pid 4242 (python3)");
    // Stored and read with the metrics alone (history), the same decision.
    core::StabilityFigures f;
    f.other_processes = static_cast<int>(r.metrics.at(core::kOtherProcessesMetric));
    CHECK(core::unstable_note(f, core::MeasureSettings{}) == note);
  }

  TEST_CASE("--require-idle-gpu: another process before the samples ends the case unmeasured") {
    Device d;
    FakeGpu gpu;
    gpu.processes_seen = {std::vector<measure::GpuProcess>{{kOwnPid, "attnprof-worker", false},
                                                           {4242, "python3", false}}};
    measure::DeviceTimerOptions o = events_only();
    o.require_idle_gpu = true;
    measure::DeviceTimer t(parts(d, &gpu), o);
    CHECK_THROWS_WITH_AS(
        t.sample(), "the GPU is shared with pid 4242 (python3) (--require-idle-gpu: not measured)",
        util::EnvironmentError);
    // The ab partner is no co-tenant: measured.
    FakeGpu pair;
    pair.processes_seen = {std::vector<measure::GpuProcess>{{kOwnPid, "attnprof-worker", false},
                                                            {501, "attnprof-worker", true}}};
    measure::DeviceTimer t2(parts(d, &pair), o);
    CHECK(t2.sample().ns == 2'000'000);
  }

  TEST_CASE("with activity read: only processes that ran something share the GPU") {
    const std::vector<measure::GpuProcess> all{{kOwnPid, "attnprof-worker", false},
                                               {4242, "python3", false},
                                               {77, "Xorg", false},
                                               {501, "attnprof-worker", true}};
    const std::map<std::uint32_t, double> act{{kOwnPid, 98}, {4242, 37}, {501, 60}};
    measure::OtherProcesses o = measure::other_processes(all, kOwnPid, &act);
    CHECK(o.count == 1);
    CHECK(o.who == "pid 4242 (python3) at up to 37% SM");
    CHECK(o.idle == 1);
    CHECK(o.idle_who == "pid 77 (Xorg)");
    // A process at 0% in the samples is as idle as one with no sample.
    const std::map<std::uint32_t, double> quiet{{kOwnPid, 98}, {4242, 0}};
    o = measure::other_processes(all, kOwnPid, &quiet);
    CHECK(o.count == 0);
    CHECK(o.idle == 2);
    // The MPS server says what it is.
    o = measure::other_processes({{kOwnPid, "attnprof-worker"}, {12, "nvidia-cuda-mps-server"}},
                                 kOwnPid);
    CHECK(o.who == "pid 12 (nvidia-cuda-mps-server: MPS is on, its clients share the GPU)");
    // Host pids (a container): this worker is one of the active ones.
    const std::map<std::uint32_t, double> host{{90001, 95}};
    o = measure::other_processes({{90001, ""}, {90002, ""}}, kOwnPid, &host);
    CHECK(o.count == 0);
    CHECK(o.idle == 1);
    const std::map<std::uint32_t, double> both{{90001, 95}, {90002, 40}};
    o = measure::other_processes({{90001, ""}, {90002, ""}}, kOwnPid, &both);
    CHECK(o.count == 1);
    CHECK(o.idle == 0);
  }

  TEST_CASE("a display server holding the GPU idle is noted, not counted; one that ran is") {
    Device d;
    FakeGpu gpu;
    const std::vector<measure::GpuProcess> with_xorg{{kOwnPid, "attnprof-worker", false},
                                                     {77, "Xorg", false}};
    gpu.processes_seen = {with_xorg};
    gpu.activity = {std::map<std::uint32_t, double>{{kOwnPid, 12}},
                    std::map<std::uint32_t, double>{{kOwnPid, 99}}};
    gpu.utilization = {12.0, 99.0};
    measure::DeviceTimer t(parts(d, &gpu), events_only());
    core::CaseResult r = measured(t, 20);
    CHECK(r.metrics.at(core::kOtherProcessesMetric) == 0);
    CHECK(r.metrics.at(core::kIdleOtherProcessesMetric) == 1);
    CHECK(r.metrics.at(core::kUtilizationBeginMetric) == 12);
    CHECK(r.metrics.at(core::kUtilizationEndMetric) == 99);
    CHECK(r.metrics.at(core::kTemperatureBeginMetric) == 71);
    CHECK(r.metrics.at(core::kTemperatureEndMetric) == 71);
    CHECK(r.message ==
          "GPU also held by pid 77 (Xorg), idle during the samples (not counted as sharing it)");
    CHECK_FALSE(core::stability(r).unstable);
    // Before the samples it asked for the second before; after them, for the samples' window.
    REQUIRE(gpu.asked_since.size() == 2);
    CHECK(gpu.asked_since[1] - gpu.asked_since[0] == measure::GpuWatch::kActivityLookbackUs);

    // The same process running kernels during the samples: the case shared its GPU.
    FakeGpu busy;
    busy.processes_seen = {with_xorg};
    busy.activity = {std::map<std::uint32_t, double>{{kOwnPid, 12}},
                     std::map<std::uint32_t, double>{{kOwnPid, 99}, {77, 41}}};
    measure::DeviceTimer t2(parts(d, &busy), events_only());
    core::CaseResult r2 = measured(t2, 20);
    CHECK(r2.metrics.at(core::kOtherProcessesMetric) == 1);
    CHECK(r2.message == "GPU shared during its samples with pid 77 (Xorg) at up to 41% SM");
    CHECK(core::stability(r2).note == "unstable: its GPU shared with 1 other process");
  }

  TEST_CASE("--require-idle-gpu refuses a process active in the second before, not an idle one") {
    Device d;
    measure::DeviceTimerOptions o = events_only();
    o.require_idle_gpu = true;
    const std::vector<measure::GpuProcess> shared{{kOwnPid, "attnprof-worker", false},
                                                  {4242, "python3", false}};
    FakeGpu idle;
    idle.processes_seen = {shared};
    idle.activity = {std::map<std::uint32_t, double>{{kOwnPid, 50}}};
    measure::DeviceTimer t(parts(d, &idle), o);
    CHECK(t.sample().ns == 2'000'000);
    FakeGpu active;
    active.processes_seen = {shared};
    active.activity = {std::map<std::uint32_t, double>{{kOwnPid, 50}, {4242, 80}}};
    measure::DeviceTimer t2(parts(d, &active), o);
    CHECK_THROWS_WITH_AS(t2.sample(),
                         "the GPU is shared with pid 4242 (python3) at up to 80% SM "
                         "(--require-idle-gpu: not measured)",
                         util::EnvironmentError);
  }

  TEST_CASE("sharing_now, before a case's setup: the active ones over the last second") {
    const std::vector<measure::GpuProcess> shared{
        {kOwnPid, "attnprof-worker", false}, {4242, "python3", false}, {77, "Xorg", false}};
    FakeGpu gpu;
    gpu.processes_seen = {shared};
    gpu.activity = {std::map<std::uint32_t, double>{{kOwnPid, 50}, {4242, 80}}};
    const measure::OtherProcesses o = measure::sharing_now(gpu, kOwnPid, 5'000'000);
    CHECK(o.count == 1);
    CHECK(o.who == "pid 4242 (python3) at up to 80% SM");
    CHECK(o.idle == 1);
    REQUIRE(gpu.asked_since.size() == 1);
    CHECK(gpu.asked_since[0] == 5'000'000 - measure::GpuWatch::kActivityLookbackUs);
    const measure::GpuSharedError e(o);
    CHECK(e.count() == 1);
    CHECK(std::string(e.what()) ==
          "the GPU is shared with pid 4242 (python3) at up to 80% SM "
          "(--require-idle-gpu: not measured)");
    // Activity not readable: every other process with a context counts.
    FakeGpu blind;
    blind.processes_seen = {shared};
    CHECK(measure::sharing_now(blind, kOwnPid, 5'000'000).count == 2);
    // Processes not readable: nobody can be named, nothing is refused.
    FakeGpu none;
    none.processes_seen = {std::nullopt};
    CHECK(measure::sharing_now(none, kOwnPid, 5'000'000).count == 0);
  }

  TEST_CASE("without NVML: no GPU metric, no note, never unstable for the GPU's sake") {
    Device d;
    measure::DeviceTimer t(parts(d, nullptr), events_only());
    core::CaseResult r = measured(t, 20);
    CHECK(r.metrics.count(core::kExpectedClockMetric) == 0);
    CHECK(r.metrics.count(core::kThrottledMetric) == 0);
    CHECK(r.message.empty());
    CHECK_FALSE(core::stability(r).unstable);
  }
}
