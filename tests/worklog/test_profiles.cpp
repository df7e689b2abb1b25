// Profiles (schema version 4): launch shapes and ncu metrics, written apart; migrating a version 3
// file; reading an older file without writing to it.
#include "kiln/worklog/schema.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

namespace schema = kiln::worklog::schema;
using kiln::worklog::OpenMode;
using kiln::worklog::ProfileKey;
using kiln::worklog::Worklog;
using worklog_test::query_int;
using worklog_test::query_text;

namespace {

// A version 3 file with one session and one timing, made by the real migrations up to 3.
void make_version_3(const std::filesystem::path& path) {
  kiln::worklog::sqlite::Database db(path);
  schema::prepare(db, schema::migrations().first(3));
  db.exec("INSERT INTO sessions (kernel, strategy, device, context_key) VALUES ('softmax_cuda', 'exhaustive', '{}', 'ctx');"
          "INSERT INTO measurements (context_key, kernel, variant, variant_hash, problem_key, phase, status, result, "
          "session_id, median_s) VALUES ('ctx', 'softmax_cuda', 'v1', 'h1', 'rows=4', 'bench', 'ok', "
          "'{\"median_s\": 1e-5}', 1, 1e-5)",
          "fill a version 3 worklog");
}

const char* kShape =
    R"j([{"block":[256,1,1],"ctas":66,"ctas_per_sm":8,"dynamic_shared_bytes":0,"grid":[66,1,1],"kernel":"scale_rows(float*, int)","local_bytes":0,"registers":8,"static_shared_bytes":0,"threads_per_cta":256}])j";

}  // namespace

TEST_CASE("profiles: a version 3 worklog migrates to 4 with an empty profiles table, its rows kept") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "v3.sqlite";
  make_version_3(path);
  REQUIRE(query_int(path, "PRAGMA user_version") == 3);
  REQUIRE(query_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'profiles'") == 0);

  Worklog log = Worklog::open(path, OpenMode::existing);
  CHECK(schema::latest_version() >= 4);
  CHECK(query_int(path, "PRAGMA user_version") == schema::latest_version());
  CHECK(query_int(path, "SELECT count(*) FROM profiles") == 0);
  CHECK(query_int(path, "SELECT count(*) FROM measurements") == 1);
  CHECK(log.profiles("ctx", "softmax_cuda").empty());
  CHECK(log.integrity_problems().empty());
}

TEST_CASE("profiles: launch shapes and metrics are two halves of one row, each write keeps the other") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.sqlite");
  const auto session = log.start_session(worklog_test::make_session());
  const ProfileKey key{"ctx", "softmax_cuda", "v1", "h1", "rows=4"};
  log.put_launch_shapes(key, 132, kShape, session);
  auto p = log.profile(key);
  REQUIRE(p);
  CHECK(p->sm_count == 132);
  CHECK(p->launches == kShape);
  CHECK(p->session_id == session);
  CHECK_FALSE(p->launches_at.empty());
  CHECK(p->metrics.empty());

  const std::string metrics = R"j([{"kernel":"scale_rows(float *, int)","metrics":{"launch__grid_size":{"unit":"","value":66}}}])j";
  log.put_profile_metrics(key, metrics, "ncu 2025.3.1.0");
  p = log.profile(key);
  REQUIRE(p);
  CHECK(p->launches == kShape);  // kept
  CHECK(p->metrics == metrics);
  CHECK(p->tool == "ncu 2025.3.1.0");
  CHECK_FALSE(p->profiled_at.empty());

  log.put_launch_shapes(key, 132, "[]", session);
  CHECK(log.profile(key)->metrics == metrics);  // kept
  CHECK(log.profile(key)->launches == "[]");
  REQUIRE(log.profiles("ctx", "softmax_cuda").size() == 1);
  CHECK(log.profiles("other", "softmax_cuda").empty());

  // Not JSON arrays, or no SM at all: refused by the schema.
  CHECK_THROWS(log.put_launch_shapes(key, 132, "{}", session));
  CHECK_THROWS(log.put_profile_metrics(key, "not json", ""));
  CHECK_THROWS(log.put_launch_shapes(key, 0, "[]", session));
  CHECK_THROWS_WITH(log.put_launch_shapes({"ctx", "softmax_cuda", "v1", "h1", ""}, 132, "[]", session),
                    kiln_test::ContainsSubstring("cannot store a profile without a kernel, a variant and a problem"));
}

TEST_CASE("profiles: a version 3 worklog reads read-only (no profiles) and stays version 3") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "v3.sqlite";
  make_version_3(path);
  const std::string before = kiln_test::read_file(path);
  {
    Worklog log = Worklog::open(path, OpenMode::read_only);
    CHECK(log.profiles("ctx", "softmax_cuda").empty());
    CHECK_FALSE(log.profile({"ctx", "softmax_cuda", "v1", "h1", "rows=4"}));
  }
  CHECK(query_int(path, "PRAGMA user_version") == 3);
  CHECK(kiln_test::read_file(path) == before);
  CHECK_FALSE(std::filesystem::exists(path.string() + "-wal"));
}
