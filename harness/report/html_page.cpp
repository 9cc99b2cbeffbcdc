// The HTML reports' page scaffolding (html_page.h).
#include "harness/report/html_page.h"

#include <ctime>

#include "harness/report/format.h"
#include "harness/util/format.h"

namespace attnprof::report::html {

std::string esc(const std::string& s) {
  return xml_escape(s);
}

std::string date(std::int64_t ns) {
  if (ns <= 0) return "";
  std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string dur(double ns) {
  return ns > 0 ? util::format_duration(ns) : "";
}

namespace {

const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1180px;
 color:#1f2328;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin-bottom:4px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.regression,.failed,.missing{background:#ffebe9}.improvement{background:#dafbe1}
.inconclusive,.unstable{background:#fff8c5}.accepted,.ignored,.new{background:#f6f8fa}
.muted{color:#656d76}.note{border-left:4px solid #d4a72c;padding:4px 12px;background:#fff8c5}
svg{background:#fff;border:1px solid #d0d7de;margin:8px 0}
svg text{font:11px system-ui,sans-serif;fill:#1f2328}
details{margin:6px 0}summary{cursor:pointer}
)";

}  // namespace

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         esc(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" +
         esc(title) + "</h1>\n" + body + "</body>\n</html>\n";
}

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::vector<std::string>& row_classes) {
  std::string o = "<table>\n<tr>";
  for (const auto& h : header) o += "<th>" + esc(h) + "</th>";
  o += "</tr>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    o += i < row_classes.size() && !row_classes[i].empty()
             ? "<tr class=\"" + esc(row_classes[i]) + "\">"
             : std::string("<tr>");
    for (const auto& cell : rows[i]) {
      o += (numeric(cell) ? "<td class=\"n\">" : "<td>") + esc(cell) + "</td>";
    }
    o += "</tr>\n";
  }
  return o + "</table>\n";
}

}  // namespace attnprof::report::html
