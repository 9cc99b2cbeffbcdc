// costmatrix::render_table and render_kernels: exact text, sorting, limits, bad keys.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <stdexcept>

#include "harness/costmatrix/table.h"
#include "report_fixtures.h"

using namespace attnprof;

namespace {

core::CostRow row(std::string op, int calls, double self, double total, double dev_self = 0,
                  double dev_total = 0) {
  core::CostRow r;
  r.op = std::move(op);
  r.calls = calls;
  r.cpu_self_ns = self;
  r.cpu_total_ns = total;
  r.device_self_ns = dev_self;
  r.device_total_ns = dev_total;
  return r;
}

}  // namespace

TEST_SUITE("costmatrix::Table") {
  TEST_CASE("times follow torch's format, sizes every other table's") {
    CHECK(costmatrix::format_time_ns(12'345) == "12.345us");
    CHECK(costmatrix::format_time_ns(1'234'567) == "1.235ms");
    CHECK(costmatrix::format_time_ns(2e9) == "2.000s");
    core::CostRow r = row("aten::empty", 1, 1, 1);
    r.bytes_allocated = 393216;
    r.bytes_freed = 512;
    const std::string out = costmatrix::render_table({r}, "", 0);
    CHECK(out.find("  384.00 KiB  ") != std::string::npos);
    CHECK(out.find("  -512 B  ") != std::string::npos);
  }

  TEST_CASE("CPU-only table: exact text") {
    std::vector<core::CostRow> rows = {row("aten::softmax", 1, 300, 300),
                                       row("aten::matmul", 2, 100, 700)};
    const std::string expected =
        "-------------  ------------  ------------  ------------  ------------  ------------  "
        "------------  \n"
        "Name             Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # "
        "of Calls  \n"
        "-------------  ------------  ------------  ------------  ------------  ------------  "
        "------------  \n"
        "aten::softmax        75.00%       0.300us        75.00%       0.300us       0.300us       "
        "      1  \n"
        "aten::matmul         25.00%       0.100us       175.00%       0.700us       0.350us       "
        "      2  \n"
        "-------------  ------------  ------------  ------------  ------------  ------------  "
        "------------  \n"
        "Self CPU time total: 0.400us\n";
    CHECK(costmatrix::render_table(rows, "", 0) == expected);
  }

  TEST_CASE("device columns appear with device time; default sort is device self") {
    std::vector<core::CostRow> rows = {row("aten::softmax", 1, 300, 300, 10, 10),
                                       row("aten::bmm", 1, 100, 100, 900, 900)};
    rows[1].launches = 3;
    rows[1].copies = 2;
    const std::string out = costmatrix::render_table(rows, "", 0);
    CHECK(out.find("Self Device %") != std::string::npos);
    CHECK(out.find("Launches") != std::string::npos);
    CHECK(out.find("Copies") != std::string::npos);
    // The bmm row: 3 launches, then 2 copies, in their right-aligned columns.
    CHECK(out.find(std::string(11, ' ') + "3" + std::string(13, ' ') + "2  ") != std::string::npos);
    CHECK(out.find("aten::bmm") < out.find("aten::softmax"));
    CHECK(out.find("Self Device time total: 0.910us\n") != std::string::npos);
    // Sorting by CPU self (torch's spelling) flips the order.
    const std::string by_cpu = costmatrix::render_table(rows, "self_cpu_time_total", 0);
    CHECK(by_cpu.find("aten::softmax") < by_cpu.find("aten::bmm"));
  }

  TEST_CASE("row limit keeps the top rows and says so") {
    std::vector<core::CostRow> rows = {row("a", 1, 1, 1), row("b", 1, 3, 3), row("c", 1, 2, 2)};
    const std::string out = costmatrix::render_table(rows, "cpu_self", 2);
    CHECK(out.find("b ") != std::string::npos);
    CHECK(out.find("c ") != std::string::npos);
    CHECK(out.find("\na ") == std::string::npos);
    CHECK(out.find("(2 of 3 rows shown)\n") != std::string::npos);
    // Totals are over all rows, not only the shown ones.
    CHECK(out.find("Self CPU time total: 0.006us") != std::string::npos);
  }

  TEST_CASE("shapes and memory columns appear when a row has them; long names are cut") {
    std::vector<core::CostRow> rows = {row(std::string(70, 'x'), 1, 1, 1)};
    rows[0].input_shapes = "[[1, 2], [3]]";
    rows[0].bytes_allocated = 2048;
    const std::string out = costmatrix::render_table(rows, "", 0);
    CHECK(out.find("Input Shapes") != std::string::npos);
    CHECK(out.find("[[1, 2], [3]]") != std::string::npos);
    CHECK(out.find("2.00 KiB") != std::string::npos);
    CHECK(out.find(std::string(52, 'x') + "...") != std::string::npos);
    CHECK(out.find(std::string(53, 'x')) == std::string::npos);
  }

  TEST_CASE("golden at 120 and 80 columns: columns left out and named, never split") {
    std::vector<core::CostRow> rows = {
        row("aten::scaled_dot_product_attention", 1, 900, 2000),
        row("aten::_scaled_dot_product_flash_attention", 1, 800, 1100),
        row("aten::empty", 3, 300, 300)};
    for (auto& r : rows) r.input_shapes = "[[1, 12, 128, 64], [1, 12, 128, 64]]";
    rows[2].bytes_allocated = 393216;
    for (std::size_t width : {120, 80}) {
      const std::string out = costmatrix::render_table(rows, "", 0, width);
      testing::check_golden(fmt::format("costmatrix.{}.txt", width), out);
      std::size_t start = 0, widest = 0;
      while (start < out.size()) {
        const std::size_t end = out.find('\n', start);
        widest = std::max(widest, end - start);
        start = end + 1;
      }
      CHECK(widest <= width);
      CHECK(out.find("aten::_scaled_dot_product_flash_attention  ") != std::string::npos);
    }
    CHECK(costmatrix::render_table(rows, "", 0, 0).find("left out") == std::string::npos);
  }

  TEST_CASE("with device columns, at 120 and 80: the device's self time and the name stay") {
    std::vector<core::CostRow> rows = {
        row("aten::_scaled_dot_product_flash_attention", 1, 9000, 9500, 41000, 41000),
        row("aten::empty", 2, 800, 800)};
    rows[0].launches = 1;
    rows[0].kernels = {{"pytorch_flash::flash_fwd_kernel", 1}};
    for (std::size_t width : {120, 80}) {
      const std::string out = costmatrix::render_table(rows, "", 0, width);
      testing::check_golden(fmt::format("costmatrix.device.{}.txt", width), out);
      CHECK(out.find("Self Device  ") != std::string::npos);
      CHECK(out.find("41.000us") != std::string::npos);
    }
  }

  TEST_CASE("an unknown sort key names the valid ones") {
    CHECK_THROWS_WITH_AS(
        costmatrix::render_table({}, "self_cuda", 0),
        "unknown sort key \"self_cuda\" (expected one of: cpu_self, self_cpu_time_total, "
        "cpu_total, cpu_time_total, device_self, self_cuda_time_total, self_device_time_total, "
        "device_total, cuda_time_total, device_time_total, calls, count, bytes, "
        "self_cpu_memory_usage, share, launches, copies, name)",
        std::invalid_argument);
  }

  TEST_CASE("kernel view: exact text") {
    costmatrix::Kernels k;
    costmatrix::KernelRow r;
    r.kernel = "flash_fwd_kernel";
    r.op = "aten::_flash_attention_forward";
    r.calls = 2;
    r.total_ns = 3000;
    r.min_ns = 1000;
    r.max_ns = 2000;
    r.grid = {16, 8, 1};
    r.block = {128, 1, 1};
    r.registers_per_thread = 255;
    r.shared_bytes = 49152;
    k.rows.push_back(r);
    k.total_ns = 3000;
    const std::string expected =
        "----------------  ------------------------------  --------  ------------  ---------  "
        "------------  ------------  ------------  ----------------  --------------  ------  "
        "------------  \n"
        "Kernel            Op                                 Calls         Total    Total %       "
        "    Avg           Min           Max              Grid           Block    Regs    Shared "
        "Mem  \n"
        "----------------  ------------------------------  --------  ------------  ---------  "
        "------------  ------------  ------------  ----------------  --------------  ------  "
        "------------  \n"
        "flash_fwd_kernel  aten::_flash_attention_forward         2       3.000us    100.00%       "
        "1.500us       1.000us       2.000us        [16, 8, 1]     [128, 1, 1]     255     48.00 "
        "KiB  \n"
        "----------------  ------------------------------  --------  ------------  ---------  "
        "------------  ------------  ------------  ----------------  --------------  ------  "
        "------------  \n"
        "Kernel time total: 3.000us\n";
    CHECK(costmatrix::render_kernels(k, 0) == expected);
  }
}
