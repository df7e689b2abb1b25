// Values and probes shared by the worklog tests.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "kiln/worklog/sqlite.hpp"
#include "kiln/worklog/worklog.hpp"

namespace worklog_test {

inline kiln::worklog::Session make_session(const std::string& kernel = "softmax_cuda") {
  kiln::worklog::Session s;
  s.kernel = kernel;
  s.strategy = "exhaustive";
  s.device = R"({"backend":"cuda","name":"NVIDIA H100 80GB HBM3","compute_capability":"9.0","driver":"550.54.15","cuda_runtime":"12.4"})";
  s.context_key = "ctx-h100";
  return s;
}

inline kiln::worklog::Attempt make_attempt(const std::string& kernel, const std::string& variant) {
  kiln::worklog::Attempt a;
  a.kernel = kernel;
  a.variant = variant;
  a.hypothesis = "wider vectors halve the load instructions";
  a.change = "VEC 4 -> 8";
  a.baseline = 2.0e-3;
  a.result = 1.5e-3;
  a.unit = "s";
  a.verdict = kiln::worklog::Verdict::keep;
  return a;
}

// One value from a query on a plain connection, bypassing the Worklog class.
inline std::string query_text(const std::filesystem::path& path, const std::string& sql) {
  kiln::worklog::sqlite::OpenOptions options;
  options.create = false;
  options.wal = false;
  kiln::worklog::sqlite::Database db(path, options);
  kiln::worklog::sqlite::Statement statement = db.prepare(sql, "probe");
  return statement.step() ? statement.get_text(0) : std::string();
}

inline std::int64_t query_int(const std::filesystem::path& path, const std::string& sql) {
  return std::stoll(query_text(path, sql));
}

}  // namespace worklog_test
